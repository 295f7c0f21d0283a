package io.flashsale.persistence;

import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** An orders row. */
public record OrderRow(String orderId, String tenant, String subject, String requestKey, String payload, String sku,
    int quantity, long amount, OrderStatus status, int version, String reservationKey, int reserveAttempt,
    String workflowId) {

  private static final String COLUMNS = "order_id, tenant, subject, request_key, payload, sku, quantity, amount,"
      + " status, version, reservation_key, reserve_attempt, workflow_id";

  public OrderView view() {
    return new OrderView(orderId, tenant, subject, sku, quantity, amount, status, version, reservationKey);
  }

  /** Locks the row until the transaction ends: every decision on an order is made under it. */
  public static OrderRow lock(Connection c, String orderId) throws SQLException {
    OrderRow row = find(c, "SELECT " + COLUMNS + " FROM orders WHERE order_id = ? FOR UPDATE", orderId);
    if (row == null) throw new IllegalArgumentException("no such order " + orderId);
    return row;
  }

  /** Negative control C29-16 only: the row as {@link #lock} reads it, without the lock. */
  public static OrderRow read(Connection c, String orderId) throws SQLException {
    OrderRow row = get(c, orderId);
    if (row == null) throw new IllegalArgumentException("no such order " + orderId);
    return row;
  }

  public static OrderRow get(Connection c, String orderId) throws SQLException {
    return find(c, "SELECT " + COLUMNS + " FROM orders WHERE order_id = ?", orderId);
  }

  public static OrderRow byScope(Connection c, String tenant, String subject, String requestKey) throws SQLException {
    return find(c, "SELECT " + COLUMNS + " FROM orders WHERE tenant = ? AND subject = ? AND request_key = ?",
        tenant, subject, requestKey);
  }

  /** The request key's order if the workflow {@code workflowId} made it, else null. */
  public static OrderRow ofRun(Connection c, String tenant, String subject, String requestKey, String workflowId)
      throws SQLException {
    return find(c, "SELECT " + COLUMNS + " FROM orders WHERE tenant = ? AND subject = ? AND request_key = ?"
        + " AND workflow_id = ?", tenant, subject, requestKey, workflowId);
  }

  private static OrderRow find(Connection c, String sql, String... args) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) ps.setString(i + 1, args[i]);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) return null;
        return new OrderRow(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
            rs.getString(6), rs.getInt(7), rs.getLong(8), OrderStatus.valueOf(rs.getString(9)), rs.getInt(10),
            rs.getString(11), rs.getInt(12), rs.getString(13));
      }
    }
  }

  public OrderRow with(OrderStatus newStatus, int newVersion) {
    return new OrderRow(orderId, tenant, subject, requestKey, payload, sku, quantity, amount, newStatus, newVersion,
        reservationKey, reserveAttempt, workflowId);
  }

  public OrderRow withReservation(String key, int attempt) {
    return new OrderRow(orderId, tenant, subject, requestKey, payload, sku, quantity, amount, status, version, key,
        attempt, workflowId);
  }
}
