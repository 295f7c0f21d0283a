package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flashsale.api.representations.OrderBody;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries.TimelineEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A create's answer does not move with the order: a retry after pay and re-reserve answers what the create did. */
class CreatedAnswerTest {
  private static OrderDetails order(String status, int version, String reservationKey, String reservationStatus,
      List<TimelineEntry> timeline) {
    return new OrderDetails("ord-0007", "t1", "user-1", "k1", OrderStatus.valueOf(status), version, "sku-1", 2, 3980, "gift",
        reservationKey, reservationStatus, "order:t1:user-1:k1", "2026-11-30T12:00:00Z", timeline);
  }

  @Test
  void theAnswerIsTheOrderAsItsCreateMadeIt() {
    TimelineEntry created = new TimelineEntry(null, OrderStatus.CREATED, 1, "create", "2026-11-30T12:00:00Z");
    List<TimelineEntry> later = List.of(created,
        new TimelineEntry(OrderStatus.CREATED, OrderStatus.PAYING, 2, "pay", "2026-11-30T12:00:01Z"),
        new TimelineEntry(OrderStatus.PAYING, OrderStatus.PAID, 3, "charge reply", "2026-11-30T12:00:02Z"));
    OrderBody first = OrderResource.createdAnswer(io.flashsale.domain.CreateOutcome.CREATED, order("CREATED", 1, "ord-0007/r1", "HELD", List.of(created)));
    OrderBody retry = OrderResource.createdAnswer(io.flashsale.domain.CreateOutcome.REPLAY, order("PAID", 3, "ord-0007/r2", "CONFIRMED", later));
    // the same order fields; only the outcome tells the replay from the first answer
    assertEquals(first, OrderResource.createdAnswer(io.flashsale.domain.CreateOutcome.CREATED,
        order("PAID", 3, "ord-0007/r2", "CONFIRMED", later)));
    assertEquals(io.flashsale.domain.CreateOutcome.REPLAY, retry.outcome());
    assertEquals(OrderStatus.CREATED, retry.status());
    assertEquals(1, retry.version());
    assertEquals(new OrderBody.Reservation("ord-0007/r1", "HELD"), retry.reservation());
    assertEquals(1, retry.timeline().size());
  }
}
