package io.flashsale.persistence;

import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.Transition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * The only code that writes orders.status (docs/DESIGN.md §State machine, rule 1). A transition is
 * a conditional UPDATE on the expected status and version; zero rows means rejected, never
 * overwritten. It writes the transition row and, for terminal states, the outbox event in the
 * caller's transaction.
 */
public final class OrderTransitions {

  private OrderTransitions() {}

  /**
   * The first status of an order: the row itself, inserted as CREATED v1, with {@code seq}, the
   * sequence number its id was issued from ({@link OrderIdIssuer}), which orders a buyer's list.
   */
  public static Transition insertCreated(Connection c, OrderRow o, long seq, String note, String cause)
      throws SQLException {
    return insert(c, o, seq, note, cause);
  }

  /**
   * The same for a row made without an issued id (tests and tools that write orders directly): its
   * {@code seq} is the next number of the sequence, the column's default, so it still lists in
   * creation order.
   */
  public static Transition insertCreated(Connection c, OrderRow o, String note, String cause) throws SQLException {
    return insert(c, o, null, note, cause);
  }

  private static Transition insert(Connection c, OrderRow o, Long seq, String note, String cause) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO orders (order_id, tenant, subject, request_key, payload, sku, quantity, amount, note, status,"
            + " version, reservation_key, reserve_attempt, workflow_id" + (seq != null ? ", seq" : "") + ")"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'CREATED', 1, ?, 1, ?" + (seq != null ? ", ?" : "") + ")")) {
      ps.setString(1, o.orderId());
      ps.setString(2, o.tenant());
      ps.setString(3, o.subject());
      ps.setString(4, o.requestKey());
      ps.setString(5, o.payload());
      ps.setString(6, o.sku());
      ps.setInt(7, o.quantity());
      ps.setLong(8, o.amount());
      ps.setString(9, note);
      ps.setString(10, o.reservationKey());
      ps.setString(11, o.workflowId());
      if (seq != null) ps.setLong(12, seq);
      ps.executeUpdate();
    }
    Transition t = new Transition(null, OrderStatus.CREATED, 1, cause);
    record(c, o.orderId(), t);
    return t;
  }

  /**
   * from → to if the row still is (from, version). Returns the transition, or null when rejected.
   */
  public static Transition apply(Connection c, OrderRow o, OrderStatus to, String cause) throws SQLException {
    return apply(c, o, to, cause, null);
  }

  /**
   * The same, for a move a charge made: {@code chargeTxn} (the channel's transaction id of that
   * charge, null if the answer carried none) is kept on the row, so a later notice of the same
   * charge can be answered at its arrival (docs/DESIGN.md §Callbacks, "Copies of an applied notice").
   */
  public static Transition apply(Connection c, OrderRow o, OrderStatus to, String cause, String chargeTxn)
      throws SQLException {
    return write(c, o, to, cause, chargeTxn, true, true);
  }

  /**
   * Negative control C29-16 only (the activities' safeguard CONDITIONAL_WRITE switched off): the
   * same write without {@code AND status = ? AND version = ?}, so a row read before it moved on
   * overwrites it.
   */
  public static Transition applyWithoutPrecondition(Connection c, OrderRow o, OrderStatus to, String cause)
      throws SQLException {
    return applyWithoutPrecondition(c, o, to, cause, null);
  }

  static Transition applyWithoutPrecondition(Connection c, OrderRow o, OrderStatus to, String cause, String chargeTxn)
      throws SQLException {
    return write(c, o, to, cause, chargeTxn, false, true);
  }

  /**
   * Negative control C29-19 only (the safeguard PAID_EVENT_IN_SAME_TX switched off): the status
   * write without its outbox event, which {@link DualWrite} writes in a second transaction.
   */
  static Transition applyWithoutEvent(Connection c, OrderRow o, OrderStatus to, String cause, String chargeTxn)
      throws SQLException {
    return write(c, o, to, cause, chargeTxn, true, false);
  }

  private static Transition write(Connection c, OrderRow o, OrderStatus to, String cause, String chargeTxn,
      boolean precondition, boolean event) throws SQLException {
    int newVersion;
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE orders SET status = ?, version = version + 1, updated_at = now()"
            + (chargeTxn != null ? ", charge_txn = ?" : "") + " WHERE order_id = ?"
            + (precondition ? " AND status = ? AND version = ?" : "") + " RETURNING version")) {
      int i = 1;
      ps.setString(i++, to.name());
      if (chargeTxn != null) ps.setString(i++, chargeTxn);
      ps.setString(i++, o.orderId());
      if (precondition) {
        ps.setString(i++, o.status().name());
        ps.setInt(i, o.version());
      }
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) return null;
        newVersion = rs.getInt(1);
      }
    }
    Transition t = new Transition(o.status(), to, newVersion, cause);
    record(c, o.orderId(), t);
    if (to.isTerminal() && event) Outbox.append(c, o, to, newVersion);
    return t;
  }

  /** The order now holds its stock under a new reservation; its status is unchanged. */
  static void reservationChanged(Connection c, String orderId, String key, int attempt) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE orders SET reservation_key = ?, reserve_attempt = ? WHERE order_id = ?")) {
      ps.setString(1, key);
      ps.setInt(2, attempt);
      ps.setString(3, orderId);
      ps.executeUpdate();
    }
  }

  private static void record(Connection c, String orderId, Transition t) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO order_transition (order_id, from_status, to_status, version, cause) VALUES (?, ?, ?, ?, ?)")) {
      ps.setString(1, orderId);
      ps.setString(2, t.from() == null ? null : t.from().name());
      ps.setString(3, t.to().name());
      ps.setInt(4, t.version());
      ps.setString(5, t.cause());
      ps.executeUpdate();
    }
  }

  /**
   * Sets or clears (reason null) why the order needs an operator (orders.attention, V10); status
   * and version are untouched. Since is kept while the reason stays the same, so a repeated mark
   * does not restart the clock.
   */
  public static void markAttention(Connection c, String orderId, String reason, String detail) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE orders SET attention = ?, attention_detail = ?,"
        + " attention_since = CASE WHEN ?::text IS NULL THEN NULL"
        + " WHEN attention IS NOT DISTINCT FROM ?::text THEN attention_since ELSE now() END WHERE order_id = ?")) {
      ps.setString(1, reason);
      ps.setString(2, reason == null ? null : detail);
      ps.setString(3, reason);
      ps.setString(4, reason);
      ps.setString(5, orderId);
      ps.executeUpdate();
    }
  }
}
