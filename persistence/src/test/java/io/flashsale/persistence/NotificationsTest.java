package io.flashsale.persistence;

import static io.flashsale.persistence.TestOrders.TENANT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.Effect;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.Notifications.Arrival;
import java.sql.PreparedStatement;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Arrivals on a real PostgreSQL: only a copy of a CHARGED notice that the order's workflow already
 * applied, on an order a charge no longer moves, is answered at arrival, with the label the
 * workflow would have written; every other arrival waits for its workflow (effect NULL).
 */
class NotificationsTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();
  private static final AtomicInteger NEXT = new AtomicInteger();
  private static final long AMOUNT = 1990; // TestOrders' amount

  private static Notifications notifications() {
    return new Notifications(pg.db());
  }

  @ParameterizedTest
  @EnumSource(OrderStatus.class)
  void aCopyOfAnAppliedSuccessIsAnsweredAtArrivalExactlyWhenTheOrderIsSettledForACharge(OrderStatus status) {
    String order = orderIn(status);
    applied(notifications().recordArrival("ntf-1", order, "CHARGED", AMOUNT, "txn-1"), "PAID");

    Arrival copy = notifications().recordArrival("ntf-1", order, "CHARGED", AMOUNT, "txn-1");

    String expected = status.isSettledForACharge() ? Effect.of(Effect.Kind.DUPLICATE, status).label() : null;
    assertEquals(expected, copy.effect());
    assertEquals(expected, effectOf(copy.id()), "the row says what the answer says");
    assertTrue(copy.copyOfApplied(), "it repeats a notice its workflow applied, whatever the status");
  }

  @Test
  void theFirstArrivalOfANoticeWaitsForItsWorkflowOnAnOrderPaidWithoutAKnownCharge() {
    String order = orderIn(OrderStatus.PAID);
    assertNull(notifications().recordArrival("ntf-first", order, "CHARGED", AMOUNT, "txn-1").effect());
  }

  /** The charge reply (or a query) paid the order; the channel's own notice of that charge follows. */
  @ParameterizedTest
  @EnumSource(OrderStatus.class)
  void theFirstNoticeOfTheChargeAnOrderWasSettledWithIsAnsweredAtArrivalExactlyWhenItIsSettled(OrderStatus status) {
    String order = orderIn(status, "txn-settled");

    Arrival first = notifications().recordArrival("ntf-settled", order, "CHARGED", AMOUNT, "txn-settled");

    String expected = status.isSettledForACharge() ? Effect.of(Effect.Kind.DUPLICATE, status).label() : null;
    assertEquals(expected, first.effect());
    assertEquals(expected, effectOf(first.id()), "the row says what the answer says");
    assertFalse(first.copyOfApplied(), "the channel's first notice of the charge is no copy");
    Arrival retried = notifications().recordArrival("ntf-settled", order, "CHARGED", AMOUNT, "txn-settled");
    assertEquals(expected, retried.effect(), "the channel's retry of it");
    assertEquals(status.isSettledForACharge(), retried.copyOfApplied(),
        "a retry of a notice answered at arrival is a copy of an applied one");
  }

  @Test
  void aFirstNoticeOfAnotherChargeOrAmountWaitsForItsWorkflow() {
    String order = orderIn(OrderStatus.PAID, "txn-settled");
    assertNull(notifications().recordArrival("ntf-7", order, "CHARGED", AMOUNT, "txn-other").effect(), "another txn");
    assertNull(notifications().recordArrival("ntf-8", order, "CHARGED", AMOUNT, null).effect(), "no txn");
    assertNull(notifications().recordArrival("ntf-9", order, "CHARGED", AMOUNT + 1, "txn-settled").effect(),
        "another amount");
    assertNull(notifications().recordArrival("ntf-10", order, "REFUNDED", AMOUNT, "txn-settled").effect(), "another kind");
    assertNull(new Notifications(pg.db(), () -> false).recordArrival("ntf-11", order, "CHARGED", AMOUNT, "txn-settled")
        .effect(), "switched off beside a negative control");
  }

  @Test
  void aCopyWhoseEarlierArrivalsAreNotAppliedYetWaitsForItsWorkflow() {
    String order = orderIn(OrderStatus.PAID);
    notifications().recordArrival("ntf-2", order, "CHARGED", AMOUNT, "txn-1");
    Arrival undelivered = notifications().recordArrival("ntf-2", order, "CHARGED", AMOUNT, "txn-1");
    notifications().markEffect(undelivered.id(), Notifications.NOT_DELIVERED);

    assertNull(notifications().recordArrival("ntf-2", order, "CHARGED", AMOUNT, "txn-1").effect(),
        "neither an arrival in flight nor one that never reached the workflow was applied");
  }

  @Test
  void aNoticeThatDiffersFromTheAppliedOneInAnyFieldWaitsForItsWorkflow() {
    String order = orderIn(OrderStatus.PAID);
    applied(notifications().recordArrival("ntf-3", order, "CHARGED", AMOUNT, "txn-1"), "PAID");

    assertNull(notifications().recordArrival("ntf-3", order, "CHARGED", AMOUNT, "txn-2").effect(), "another txn");
    assertNull(notifications().recordArrival("ntf-3", order, "CHARGED", AMOUNT, null).effect(), "no txn");
    assertNull(notifications().recordArrival("ntf-3", order, "CHARGED", AMOUNT + 1, "txn-1").effect(), "another amount");
    assertNull(notifications().recordArrival("ntf-4", order, "CHARGED", AMOUNT, "txn-1").effect(), "another notify id");
    assertNull(notifications().recordArrival("ntf-3", orderIn(OrderStatus.PAID), "CHARGED", AMOUNT, "txn-1").effect(),
        "another order");
  }

  @Test
  void onlySuccessesAreAnsweredAtArrival() {
    String order = orderIn(OrderStatus.REFUNDED);
    applied(notifications().recordArrival("ntf-5", order, "REFUNDED", AMOUNT, "txn-1"), "REFUNDED");
    assertNull(notifications().recordArrival("ntf-5", order, "REFUNDED", AMOUNT, "txn-1").effect());
  }

  @Test
  void switchedOffEveryCopyWaitsForItsWorkflow() {
    String order = orderIn(OrderStatus.PAID);
    applied(notifications().recordArrival("ntf-6", order, "CHARGED", AMOUNT, "txn-1"), "PAID");
    Notifications off = new Notifications(pg.db(), () -> false);
    assertNull(off.recordArrival("ntf-6", order, "CHARGED", AMOUNT, "txn-1").effect(),
        "beside a negative control the copy reaches the rule it would have skipped");
  }

  /** Another channel's notice never speaks for an order: not even the copy of its own settled charge. */
  @Test
  void aNoticeThroughAnotherChannelIsNotAnsweredAtArrival() {
    String order = orderIn(OrderStatus.PAID, "txn-b");
    assertNull(notifications().recordArrival("other", "ntf-b", order, "CHARGED", AMOUNT, "txn-b").effect(),
        "the order is on the default channel");
    assertEquals(Effect.of(Effect.Kind.DUPLICATE, OrderStatus.PAID).label(),
        notifications().recordArrival(OrderQueries.DEFAULT_CHANNEL, "ntf-b", order, "CHARGED", AMOUNT, "txn-b").effect());
  }

  // ---- orders and arrivals, as the workflow's steps leave them

  /** A new order walked to {@code status} along the state machine, no charge known on it. */
  private static String orderIn(OrderStatus status) {
    return orderIn(status, null);
  }

  /** The same, the move into PAID or REFUNDING made by the charge {@code chargeTxn}, as PaymentRules makes it. */
  private static String orderIn(OrderStatus status, String chargeTxn) {
    String id = "ord-n" + NEXT.incrementAndGet();
    TestOrders.create(pg.db(), id, TENANT, "buyer-" + id);
    pg.db().inTx(c -> {
      OrderTx tx = new OrderTx(c, id);
      for (OrderStatus step : pathTo(status)) {
        boolean byTheCharge = step == OrderStatus.PAID || step == OrderStatus.REFUNDING;
        tx.move(step, "test", byTheCharge ? chargeTxn : null);
      }
      return null;
    });
    return id;
  }

  private static OrderStatus[] pathTo(OrderStatus status) {
    return switch (status) {
      case CREATED -> new OrderStatus[] {};
      case PAYING -> new OrderStatus[] {OrderStatus.PAYING};
      case UNKNOWN -> new OrderStatus[] {OrderStatus.PAYING, OrderStatus.UNKNOWN};
      case PAID -> new OrderStatus[] {OrderStatus.PAYING, OrderStatus.PAID};
      case FAILED -> new OrderStatus[] {OrderStatus.PAYING, OrderStatus.FAILED};
      case CANCELLED -> new OrderStatus[] {OrderStatus.CANCELLED};
      // paid after the cancel: the money goes back
      case REFUNDING -> new OrderStatus[] {OrderStatus.CANCELLED, OrderStatus.REFUNDING};
      case REFUNDED -> new OrderStatus[] {OrderStatus.CANCELLED, OrderStatus.REFUNDING, OrderStatus.REFUNDED};
    };
  }

  /** The effect the workflow's applyNotice writes on an arrival's row. */
  private static void applied(Arrival arrival, String effect) {
    pg.db().inTx(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE payment_notification SET effect = ?, applied_at = now() WHERE id = ?")) {
        ps.setString(1, effect);
        ps.setLong(2, arrival.id());
        return ps.executeUpdate();
      }
    });
  }

  private static String effectOf(long id) {
    return pg.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT effect FROM payment_notification WHERE id = ?")) {
        ps.setLong(1, id);
        try (var rs = ps.executeQuery()) {
          rs.next();
          return rs.getString(1);
        }
      }
    });
  }
}
