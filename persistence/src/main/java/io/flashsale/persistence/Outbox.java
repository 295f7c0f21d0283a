package io.flashsale.persistence;

import io.flashsale.domain.OrderStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The one owner of {@code outbox}: the event of an order's move to a terminal status, appended in
 * the transaction of the move ({@link OrderTransitions}), and the relay's claim and mark.
 */
public final class Outbox {
  private Outbox() {}

  /** The outbox event of the order's move to a terminal status (o: the row; its id and goods). */
  static void append(Connection c, OrderRow o, OrderStatus to, int newVersion) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO outbox (order_id, event_type, order_version, payload) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, o.orderId());
      ps.setString(2, "ORDER_" + to.name());
      ps.setInt(3, newVersion);
      ps.setString(4, "{\"order_id\":\"" + o.orderId() + "\",\"status\":\"" + to + "\",\"version\":" + newVersion
          + ",\"tenant\":\"" + o.tenant() + "\",\"sku\":\"" + o.sku() + "\",\"quantity\":" + o.quantity()
          + ",\"amount\":" + o.amount() + "}");
      ps.executeUpdate();
    }
  }

  /**
   * Claims up to {@code batchSize} unpublished events, oldest first, locked until the caller's
   * transaction ends. With {@code skipLocked} several relays share the backlog; without it (a
   * negative control only) a second relay waits for the first and then delivers the same rows.
   */
  public static List<OutboxEvent> claim(Connection c, int batchSize, boolean skipLocked) throws SQLException {
    List<OutboxEvent> batch = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT event_id, order_id, event_type, order_version, payload FROM outbox WHERE published_at IS NULL"
            + " ORDER BY event_id LIMIT ? FOR UPDATE" + (skipLocked ? " SKIP LOCKED" : ""))) {
      ps.setInt(1, batchSize);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          batch.add(new OutboxEvent(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getInt(4), rs.getString(5)));
        }
      }
    }
    return batch;
  }

  /** Marks the events the consumer acknowledged as published. */
  public static void markPublished(Connection c, List<Long> eventIds) throws SQLException {
    if (eventIds.isEmpty()) return;
    try (PreparedStatement ps = c.prepareStatement("UPDATE outbox SET published_at = now() WHERE event_id = ANY (?)")) {
      ps.setArray(1, c.createArrayOf("bigint", eventIds.toArray()));
      ps.executeUpdate();
    }
  }
}
