package io.flashsale.persistence;

import io.flashsale.domain.Effect;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * The one owner of {@code payment_notification}. Arrivals of payment callbacks and operator
 * signals: recorded before the workflow is signalled, the effect filled in by the workflow; a notice of a success the order already applied gets its effect at arrival.
 */
public final class Notifications {
  /** The notice kind a settled order can answer at arrival: only a success repeats harmlessly. */
  public static final String CHARGED = "CHARGED";

  /** Effects the API writes for arrivals that never reached a workflow: such an arrival was not applied. */
  public static final String UNKNOWN_ORDER = "UNKNOWN_ORDER";
  public static final String NOT_DELIVERED = "NOT_DELIVERED";

  private static final String RECORD = "INSERT INTO payment_notification (notify_id, merchant_order, kind, amount, txn)"
      + " VALUES (?, ?, ?, ?, ?) RETURNING id, effect";

  /**
   * The arrival of a CHARGED notice, answered at once when the order is settled for a charge and
   * the notice reports the charge it was settled with (its txn on the row) or is a copy of a notice
   * its workflow already applied: the workflow would answer {@code DUPLICATE <status>}
   * (docs/DESIGN.md §Callbacks, "Copies of an applied notice"). It also says whether it is such a
   * copy: the channel's first notice of a charge and its retry storm are told apart in the log.
   */
  private static final String RECORD_CHARGED = "WITH earlier AS (SELECT EXISTS (SELECT 1 FROM payment_notification p"
      + " WHERE p.merchant_order = ? AND p.notify_id = ? AND p.kind = ? AND p.amount = ? AND p.txn IS NOT DISTINCT FROM ?"
      + " AND p.source = 'callback' AND p.effect IS NOT NULL"
      + " AND p.effect NOT IN ('" + UNKNOWN_ORDER + "', '" + NOT_DELIVERED + "')) AS applied),"
      + " settled AS (SELECT o.status FROM orders o, earlier e WHERE o.order_id = ? AND o.channel = ? AND o.amount = ?"
      + " AND o.status IN (" + settledStatuses() + ") AND (o.charge_txn = ? OR e.applied))"
      + " INSERT INTO payment_notification (notify_id, merchant_order, kind, amount, txn, effect, applied_at)"
      + " VALUES (?, ?, ?, ?, ?, (SELECT ? || ' ' || status FROM settled), (SELECT now() FROM settled))"
      + " RETURNING id, effect, (SELECT applied FROM earlier)";

  /**
   * A CHARGED arrival not yet answered, answered now if its order has since been settled with the
   * charge it reports (the same test as {@link #RECORD_CHARGED}'s, on the arrival's own row).
   */
  private static final String ANSWER_NOW_SETTLED = "UPDATE payment_notification p"
      + " SET effect = ? || ' ' || o.status, applied_at = now() FROM orders o"
      + " WHERE p.id = ? AND p.effect IS NULL AND p.kind = '" + CHARGED + "' AND o.order_id = p.merchant_order"
      + " AND o.channel = ? AND o.amount = p.amount AND o.status IN (" + settledStatuses() + ")"
      + " AND o.charge_txn = p.txn RETURNING p.effect";

  private static String settledStatuses() {
    return Arrays.stream(OrderStatus.values()).filter(OrderStatus::isSettledForACharge)
        .map(s -> "'" + s.name() + "'").collect(Collectors.joining(", "));
  }

  /**
   * One arrival's row; {@code effect} is set when the arrival was answered without its workflow,
   * {@code copyOfApplied} when an earlier arrival of the same notice was already applied.
   */
  public record Arrival(long id, String effect, boolean copyOfApplied) {
    public boolean answeredAtArrival() {
      return effect != null;
    }
  }

  private final Database db;
  /** Whether copies are answered at arrival; off only beside a negative control (below). */
  private final BooleanSupplier answersCopies;

  public Notifications(Database db) {
    this(db, () -> true);
  }

  /**
   * {@code answersCopies} false sends every arrival to its workflow: the shortcut stands for the
   * status rule of a success (C29-16's TRANSITION_PRECONDITION), so with that rule switched off
   * a copy must reach the broken rule too.
   */
  public Notifications(Database db, BooleanSupplier answersCopies) {
    this.db = db;
    this.answersCopies = answersCopies;
  }

  /**
   * Records one arrival. A CHARGED notice of the charge its order was settled with, or a copy of
   * one its order already applied, for an order that a charge no longer moves, is recorded with its
   * effect ({@code DUPLICATE <status>}): its workflow need not be woken. Anything else is recorded
   * without one, for the workflow to apply.
   */
  public Arrival recordArrival(String notifyId, String merchantOrder, String kind, long amount, String txn) {
    return recordArrival(OrderQueries.DEFAULT_CHANNEL, notifyId, merchantOrder, kind, amount, txn);
  }

  /**
   * The same, for a notice that arrived through channel {@code channel}: only an order of that
   * channel can answer it at arrival (a channel never speaks for another channel's order).
   */
  public Arrival recordArrival(String channel, String notifyId, String merchantOrder, String kind, long amount,
      String txn) {
    return db.read(c -> {
      boolean charged = CHARGED.equals(kind) && answersCopies.getAsBoolean();
      try (PreparedStatement ps = c.prepareStatement(charged ? RECORD_CHARGED : RECORD)) {
        int i = 1;
        if (charged) {
          ps.setString(i++, merchantOrder);
          ps.setString(i++, notifyId);
          ps.setString(i++, kind);
          ps.setLong(i++, amount);
          ps.setString(i++, txn);
          ps.setString(i++, merchantOrder);
          ps.setString(i++, channel);
          ps.setLong(i++, amount);
          ps.setString(i++, txn); // a null txn matches no charge
        }
        ps.setString(i++, notifyId);
        ps.setString(i++, merchantOrder);
        ps.setString(i++, kind);
        ps.setLong(i++, amount);
        ps.setString(i++, txn);
        if (charged) ps.setString(i, Effect.Kind.DUPLICATE.name());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return new Arrival(rs.getLong(1), rs.getString(2), charged && rs.getBoolean(3));
        }
      }
    });
  }

  /**
   * The arrival's effect if its order has been settled with the charge it reports since it was
   * recorded (the run it was meant for ended meanwhile: a PAID order's run ends with its pay), so
   * it is answered from the row like a copy at arrival; null when the workflow must answer it.
   */
  public String answerIfNowSettled(String channel, long arrivalId) {
    if (!answersCopies.getAsBoolean()) return null;
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(ANSWER_NOW_SETTLED)) {
        ps.setString(1, Effect.Kind.DUPLICATE.name());
        ps.setLong(2, arrivalId);
        ps.setString(3, channel);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getString(1) : null;
        }
      }
    });
  }

  /**
   * Records an operator signal's notice as an arrival of {@code orderId}, once per source
   * reference (a retried activity finds the row its first attempt wrote), and returns its id. A
   * notice the workflow already refused is recorded with that effect.
   */
  public static long recordSignalArrival(Connection c, String orderId, Notice n, String sourceRef, String effect)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO payment_notification (notify_id, merchant_order, kind, amount, txn, source, source_ref, effect,"
            + " applied_at) VALUES (?, ?, ?, ?, ?, 'signal', ?, ?, CASE WHEN ?::text IS NULL THEN NULL ELSE now() END)"
            + " ON CONFLICT (source_ref) DO NOTHING")) {
      ps.setString(1, n.notifyId() == null ? "(none)" : clip(n.notifyId()));
      ps.setString(2, orderId);
      ps.setString(3, n.kind() == null ? "(none)" : clip(n.kind()));
      ps.setLong(4, n.amount());
      ps.setString(5, n.txn() == null ? null : clip(n.txn()));
      ps.setString(6, sourceRef);
      ps.setString(7, effect);
      ps.setString(8, effect);
      ps.executeUpdate();
    }
    try (PreparedStatement ps = c.prepareStatement("SELECT id FROM payment_notification WHERE source_ref = ?")) {
      ps.setString(1, sourceRef);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Operator input is stored as text, bounded, without control characters. */
  private static String clip(String s) {
    String clean = s.replaceAll("\\p{Cntrl}", "?");
    return clean.length() > 64 ? clean.substring(0, 64) : clean;
  }

  /**
   * Locks the arrival a workflow applies and returns the effect a previous attempt recorded (null
   * if none). The arrival must be this order's and say what the notice says: a signal cannot
   * borrow another arrival's row.
   */
  public static String lockForApplying(Connection c, String orderId, Notice n) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT effect, merchant_order, notify_id, kind, amount FROM payment_notification WHERE id = ? FOR UPDATE")) {
      ps.setLong(1, n.notificationId());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next() || !orderId.equals(rs.getString(2))) {
          throw new IllegalArgumentException("notification " + n.notificationId() + " is not an arrival of " + orderId);
        }
        if (!Objects.equals(n.notifyId(), rs.getString(3)) || !Objects.equals(n.kind(), rs.getString(4))
            || n.amount() != rs.getLong(5)) {
          throw new IllegalArgumentException("notification " + n.notificationId() + " does not match the notice "
              + n.notifyId() + " " + n.kind() + " " + n.amount());
        }
        return rs.getString(1);
      }
    }
  }

  /** The effect a workflow's application of the arrival had, in the transaction that applied it. */
  public static void recordApplied(Connection c, long id, String effect) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE payment_notification SET effect = ?, applied_at = now() WHERE id = ?")) {
      ps.setString(1, effect);
      ps.setLong(2, id);
      ps.executeUpdate();
    }
  }

  /**
   * Orders a {@code paymentNotification} signal (source {@code signal}, no callback signature)
   * moved to paid, or to a refund of a payment made after the order ended: "ord-… by ops-1 PAID".
   */
  public static List<String> operatorSettled(Connection c) throws SQLException {
    List<String> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT merchant_order, notify_id, effect FROM payment_notification WHERE source = 'signal'"
            + " AND effect IN ('PAID', 'PAID_REHELD', 'REFUNDING_ANOMALY') ORDER BY merchant_order, id");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) out.add(rs.getString(1) + " by " + rs.getString(2) + " " + rs.getString(3));
    }
    return out;
  }

  /** For arrivals that never reach a workflow (unknown order, signal refused). */
  public void markEffect(long id, String effect) {
    db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE payment_notification SET effect = ?, applied_at = now() WHERE id = ? AND effect IS NULL")) {
        ps.setString(1, effect);
        ps.setLong(2, id);
        return ps.executeUpdate();
      }
    });
  }
}
