package io.flashsale.persistence;

import io.flashsale.domain.OrderStatus;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Read side of orders: for the REST API one order with its timeline or a page of own orders; for
 * reconciliation and orphan repair the lines they judge.
 */
public final class OrderQueries {

  /** One transition; {@code fromStatus} is null for the first (the create). */
  public record TimelineEntry(OrderStatus fromStatus, OrderStatus toStatus, int version, String cause, String at) {}

  /** The channel an order is on when it names none: {@code orders.channel}'s default (V9). */
  public static final String DEFAULT_CHANNEL = "default";

  /** One order; {@code channel} is the id of the payment channel it is paid through (V9). */
  public record OrderDetails(String orderId, String tenant, String subject, String requestKey, OrderStatus status,
      int version, String sku, int quantity, long amount, String note, String reservationKey,
      String reservationStatus, String workflowId, String createdAt, List<TimelineEntry> timeline, String channel) {

    /** An order on the default channel. */
    public OrderDetails(String orderId, String tenant, String subject, String requestKey, OrderStatus status,
        int version, String sku, int quantity, long amount, String note, String reservationKey,
        String reservationStatus, String workflowId, String createdAt, List<TimelineEntry> timeline) {
      this(orderId, tenant, subject, requestKey, status, version, sku, quantity, amount, note, reservationKey,
          reservationStatus, workflowId, createdAt, timeline, DEFAULT_CHANNEL);
    }
  }

  private static final String SELECT =
      "SELECT o.order_id, o.tenant, o.subject, o.request_key, o.status, o.version, o.sku, o.quantity, o.amount,"
          + " o.note, o.reservation_key, r.status, o.workflow_id, o.created_at, o.channel"
          + " FROM orders o LEFT JOIN reservation r ON r.reservation_key = o.reservation_key";

  private final Database db;

  public OrderQueries(Database db) {
    this.db = db;
  }

  /** The id of the payment channel an order is on, or null for an unknown order. */
  public String channelOf(String orderId) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT channel FROM orders WHERE order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getString(1) : null;
        }
      }
    });
  }

  public OrderDetails get(String orderId) {
    return db.read(c -> {
      OrderDetails head;
      try (PreparedStatement ps = c.prepareStatement(SELECT + " WHERE o.order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) return null;
          head = row(rs, null);
        }
      }
      List<TimelineEntry> timeline = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT from_status, to_status, version, cause, at FROM order_transition WHERE order_id = ? ORDER BY version")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            timeline.add(new TimelineEntry(status(rs.getString(1)), status(rs.getString(2)), rs.getInt(3), rs.getString(4),
                rs.getTimestamp(5).toInstant().toString()));
          }
        }
      }
      return new OrderDetails(head.orderId(), head.tenant(), head.subject(), head.requestKey(), head.status(),
          head.version(), head.sku(), head.quantity(), head.amount(), head.note(), head.reservationKey(),
          head.reservationStatus(), head.workflowId(), head.createdAt(), timeline, head.channel());
    });
  }

  /**
   * Own orders after the cursor (an order id), in creation order: by {@code seq}, the sequence
   * number each id was issued from (the ids themselves are a keyed permutation of it, in no order).
   * The page starts after the cursor's own order. A cursor that is none of the caller's orders
   * (missing, or another's: no different from a missing one) is read as the number its digits
   * spell, which is where it stood when ids were that number ({@code ord-0000}: from the start);
   * one of another form: past every order.
   */
  public List<OrderDetails> list(String tenant, String subject, String afterOrderId, int limit) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          SELECT + " WHERE o.tenant = ? AND o.subject = ? AND o.seq > coalesce("
              + "(SELECT a.seq FROM orders a WHERE a.order_id = ? AND a.tenant = ? AND a.subject = ?), ?)"
              + " ORDER BY o.seq LIMIT ?")) {
        ps.setString(1, tenant);
        ps.setString(2, subject);
        ps.setString(3, afterOrderId);
        ps.setString(4, tenant);
        ps.setString(5, subject);
        ps.setLong(6, unknownCursorSeq(afterOrderId));
        ps.setInt(7, limit);
        List<OrderDetails> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) out.add(row(rs, List.of()));
        }
        return out;
      }
    });
  }

  private static final java.util.regex.Pattern NUMBERED = java.util.regex.Pattern.compile("ord-([0-9]{1,18})");

  /** Where a cursor that is none of the caller's orders stands: see {@link #list}. */
  static long unknownCursorSeq(String afterOrderId) {
    if (afterOrderId == null) return Long.MIN_VALUE;
    java.util.regex.Matcher m = NUMBERED.matcher(afterOrderId);
    return m.matches() ? Long.parseLong(m.group(1)) : Long.MAX_VALUE;
  }

  /** Transitions of one order after a version, oldest first (the SSE feed). */
  public List<TimelineEntry> transitionsAfter(String orderId, int afterVersion) {
    return db.read(c -> {
      List<TimelineEntry> out = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT from_status, to_status, version, cause, at FROM order_transition WHERE order_id = ? AND version > ?"
              + " ORDER BY version")) {
        ps.setString(1, orderId);
        ps.setInt(2, afterVersion);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            out.add(new TimelineEntry(status(rs.getString(1)), status(rs.getString(2)), rs.getInt(3), rs.getString(4),
                rs.getTimestamp(5).toInstant().toString()));
          }
        }
      }
      return out;
    });
  }

  /** Receives exported rows; may throw when the client went away. */
  @FunctionalInterface
  public interface RowSink {
    void row(OrderDetails order) throws java.io.IOException;
  }

  /**
   * Streams the caller's orders through a server-side cursor (fetch size 500): memory stays flat
   * however many orders there are, and the connection is returned as soon as the sink throws.
   */
  public void export(String tenant, String subject, RowSink sink) throws java.io.IOException {
    try (java.sql.Connection c = db.dataSource().getConnection()) {
      c.setAutoCommit(false); // PostgreSQL uses a cursor for fetch size only inside a transaction
      try (PreparedStatement ps = c.prepareStatement(
          SELECT + " WHERE o.tenant = ? AND o.subject = ? ORDER BY o.seq")) {
        ps.setFetchSize(500);
        ps.setString(1, tenant);
        ps.setString(2, subject);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) sink.row(row(rs, List.of()));
        }
      } finally {
        c.rollback(); // read-only; never leave the pooled connection inside a transaction
      }
    } catch (SQLException e) {
      throw new Database.DatabaseException(e);
    }
  }

  /** The order an idempotency scope already has: its id and the create body it was made from. */
  public record KeyedOrder(String orderId, String payload) {}

  /** The order this idempotency scope already has, or null (a retry of it is answered from this row). */
  public KeyedOrder keyedOrder(String tenant, String subject, String requestKey) {
    return db.read(c -> {
      OrderRow row = OrderRow.byScope(c, tenant, subject, requestKey);
      return row == null ? null : new KeyedOrder(row.orderId(), row.payload());
    });
  }

  /**
   * One order as reconciliation judges it: its row, its current reservation, its ORDER_PAID event,
   * how long it has been in its status at the snapshot ({@code now() - updated_at}: every transition
   * sets updated_at) and its attention reason (V10; null when it needs none) with detail and since.
   */
  public record ReconcileLine(String orderId, String status, long amount, String reservationStatus,
      String workflowId, int version, boolean paidEventWritten, java.time.Duration inStatus, String attention,
      String attentionDetail, java.time.Instant attentionSince) {}

  /** Every order, in the caller's transaction (reconciliation reads them in one snapshot). */
  public static List<ReconcileLine> reconcileLines(java.sql.Connection c) throws SQLException {
    List<ReconcileLine> out = new ArrayList<>();
    // now() is the transaction's start: the same instant for every row of the snapshot
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT o.order_id, o.status, o.amount, r.status, o.workflow_id, o.version,"
            + " EXISTS (SELECT 1 FROM outbox e WHERE e.order_id = o.order_id AND e.event_type = 'ORDER_PAID'),"
            + " (extract(epoch FROM now() - o.updated_at) * 1000)::bigint, o.attention, o.attention_detail,"
            + " o.attention_since"
            + " FROM orders o LEFT JOIN reservation r ON r.reservation_key = o.reservation_key ORDER BY o.order_id");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        java.sql.Timestamp since = rs.getTimestamp(11);
        out.add(new ReconcileLine(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getString(4), rs.getString(5),
            rs.getInt(6), rs.getBoolean(7), java.time.Duration.ofMillis(Math.max(0, rs.getLong(8))), rs.getString(9),
            rs.getString(10), since == null ? null : since.toInstant()));
      }
    }
    return out;
  }

  /**
   * Orders needing attention, by stored reason ({@code orders.attention}, V10): one query over the
   * partial index {@code orders_needing_attention}. A reason no order has is absent.
   */
  public Map<String, Long> attentionCounts() {
    return db.read(c -> {
      Map<String, Long> out = new java.util.TreeMap<>();
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT attention, count(*) FROM orders WHERE attention IS NOT NULL GROUP BY attention");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.put(rs.getString(1), rs.getLong(2));
      }
      return out;
    });
  }

  /** An order's status and version now. */
  public record StatusAndVersion(String status, int version) {}

  /** The order's status and version now, or null if there is no such order. */
  public StatusAndVersion statusAndVersion(String orderId) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT status, version FROM orders WHERE order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? new StatusAndVersion(rs.getString(1), rs.getInt(2)) : null;
        }
      }
    });
  }

  public boolean exists(String orderId) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM orders WHERE order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next();
        }
      }
    });
  }

  /** An order its workflow still has work for, with what a new run of it needs. */
  public record NonFinal(String orderId, String status, String workflowId, String tenant, String subject,
      String requestKey, String sku, String reservationStatus, java.sql.Timestamp expiresAt) {}

  private static final String NON_FINAL = "SELECT o.order_id, o.status, o.workflow_id, o.tenant, o.subject,"
      + " o.request_key, o.sku, r.status, r.expires_at FROM orders o"
      + " LEFT JOIN reservation r ON r.reservation_key = o.reservation_key"
      + " WHERE o.status IN (" + nonTerminalStatuses() + ")";

  /** The statuses a workflow still has work for, from the enum, so a new status is included by its own definition. */
  private static String nonTerminalStatuses() {
    return java.util.Arrays.stream(OrderStatus.values()).filter(s -> !s.isTerminal())
        .map(s -> "'" + s.name() + "'").collect(java.util.stream.Collectors.joining(", "));
  }

  /** Every non-final order, by id. */
  public List<NonFinal> nonFinal() {
    return db.read(c -> {
      List<NonFinal> out = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(NON_FINAL + " ORDER BY o.order_id");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.add(nonFinal(rs));
      }
      return out;
    });
  }

  /** The order if it is still non-final, else null. */
  public NonFinal nonFinal(String orderId) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(NON_FINAL + " AND o.order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? nonFinal(rs) : null;
        }
      }
    });
  }

  private static NonFinal nonFinal(ResultSet rs) throws SQLException {
    return new NonFinal(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
        rs.getString(6), rs.getString(7), rs.getString(8), rs.getTimestamp(9));
  }

  private static OrderDetails row(ResultSet rs, List<TimelineEntry> timeline) throws SQLException {
    return new OrderDetails(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), status(rs.getString(5)),
        rs.getInt(6), rs.getString(7), rs.getInt(8), rs.getLong(9), rs.getString(10), rs.getString(11),
        rs.getString(12), rs.getString(13), rs.getTimestamp(14).toInstant().toString(), timeline, rs.getString(15));
  }

  /** The column holds enum names only (a CHECK constraint on orders.status; transitions are written from the enum). */
  private static OrderStatus status(String stored) {
    return stored == null ? null : OrderStatus.valueOf(stored);
  }
}
