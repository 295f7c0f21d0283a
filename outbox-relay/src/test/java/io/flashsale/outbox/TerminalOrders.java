package io.flashsale.outbox;

import static io.flashsale.domain.OrderStatus.CANCELLED;
import static io.flashsale.domain.OrderStatus.CREATED;
import static io.flashsale.domain.OrderStatus.FAILED;
import static io.flashsale.domain.OrderStatus.PAID;
import static io.flashsale.domain.OrderStatus.PAYING;
import static io.flashsale.domain.OrderStatus.REFUNDED;
import static io.flashsale.domain.OrderStatus.REFUNDING;

import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.Inventory;
import io.flashsale.persistence.OrderRow;
import io.flashsale.persistence.OrderTransitions;
import io.flashsale.persistence.OrderTx;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Orders moved through {@link OrderTransitions} one transaction per move, as the activities move
 * them, so the outbox rows are the ones the service writes: one per terminal status reached.
 */
final class TerminalOrders {
  private static final AtomicInteger NEXT_ID = new AtomicInteger();

  /** One outbox row as the relay finds it. */
  record OutboxRow(long eventId, String orderId, String eventType, int orderVersion, boolean published) {}

  private final Database db;

  TerminalOrders(Database db) {
    this.db = db;
  }

  /** ORDER_PAID v3. */
  String paid() {
    return order(PAYING, PAID);
  }

  /** ORDER_FAILED v3. */
  String failed() {
    return order(PAYING, FAILED);
  }

  /** Two events of one order: ORDER_CANCELLED v2, then ORDER_REFUNDED v4 (a charge landed after the cancel). */
  String cancelledThenRefunded() {
    return order(CANCELLED, REFUNDING, REFUNDED);
  }

  /** {@code count} paid orders, each with its ORDER_PAID event. */
  List<String> paid(int count) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) ids.add(paid());
    return ids;
  }

  private String order(OrderStatus... path) {
    String id = "ord-" + NEXT_ID.incrementAndGet();
    db.inTx(c -> OrderTransitions.insertCreated(c, new OrderRow(id, "t1", "buyer-" + id, "req-" + id, "{}", "sku-1", 1,
        1990, CREATED, 1, Inventory.firstReservationKey(id), 1, "order-" + id), null, "create"));
    for (OrderStatus to : path) {
      db.inTx(c -> {
        new OrderTx(c, id).move(to, "test");
        return null;
      });
    }
    return id;
  }

  /** The whole outbox, by event id. */
  List<OutboxRow> outbox() {
    return db.read(c -> {
      List<OutboxRow> rows = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT event_id, order_id, event_type, order_version,"
          + " published_at IS NOT NULL FROM outbox ORDER BY event_id");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new OutboxRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getInt(4), rs.getBoolean(5)));
        }
      }
      return rows;
    });
  }

  List<Long> eventIds() {
    return outbox().stream().map(OutboxRow::eventId).toList();
  }

  List<Long> unpublished() {
    return outbox().stream().filter(r -> !r.published()).map(OutboxRow::eventId).toList();
  }
}
