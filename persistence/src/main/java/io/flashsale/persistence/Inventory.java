package io.flashsale.persistence;

import io.flashsale.domain.CreateOutcome;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The one writer of the stock tables, {@code sku} and {@code reservation} (the conservation
 * equation spans both): reservations against the SKU's remaining stock, the SKU's own rows for
 * {@link Skus}, and the sums reconciliation checks. Every call runs inside the caller's transaction.
 */
public final class Inventory {
  /** What taking stock for a reservation found. */
  public enum Take {
    HELD, SOLD_OUT, USER_LIMIT;

    /** The create's answer when the take failed. */
    public CreateOutcome refusal() {
      return switch (this) {
        case SOLD_OUT -> CreateOutcome.SOLD_OUT;
        case USER_LIMIT -> CreateOutcome.USER_LIMIT;
        case HELD -> throw new IllegalStateException("HELD is no refusal");
      };
    }
  }

  private Inventory() {}

  /** The reservation a create holds (a re-reserve after a late payment takes /r2, /r3, ...). */
  public static String firstReservationKey(String orderId) {
    return orderId + "/r1";
  }

  /**
   * The per-user check, conditional decrement, the per-user check again (serialized by the SKU row
   * lock the decrement took), then the reservation row. On SOLD_OUT / USER_LIMIT the caller must
   * roll back.
   */
  public static Take reserve(Connection c, String key, String tenant, String sku, String subject, int quantity,
      int perUserLimit, Duration ttl) throws SQLException {
    Take taken = take(c, tenant, sku, subject, quantity, perUserLimit);
    if (taken == Take.HELD) hold(c, key, tenant, sku, subject, quantity, ttl);
    return taken;
  }

  /**
   * The stock half of a reserve: decrement and per-user check, no reservation row yet. A buyer
   * already at the limit is refused before the decrement, so creates with fresh keys never take
   * the hot SKU row's lock (docs/DESIGN.md §Overload); the check after the decrement is the one
   * that holds under concurrency, serialized by that lock.
   */
  public static Take take(Connection c, String tenant, String sku, String subject, int quantity, int perUserLimit)
      throws SQLException {
    boolean limited = perUserLimit < Integer.MAX_VALUE; // a re-reserve passes MAX_VALUE: no limit, no sums
    // SOLD_OUT still comes first when the stock cannot cover the request either (the decrement says so)
    if (limited && (long) held(c, tenant, sku, subject) + quantity > perUserLimit && remaining(c, tenant, sku) >= quantity) {
      return Take.USER_LIMIT;
    }
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE sku SET remaining = remaining - ? WHERE tenant = ? AND sku = ? AND remaining >= ?")) {
      ps.setInt(1, quantity);
      ps.setString(2, tenant);
      ps.setString(3, sku);
      ps.setInt(4, quantity);
      if (ps.executeUpdate() == 0) return Take.SOLD_OUT;
    }
    if (limited && (long) held(c, tenant, sku, subject) + quantity > perUserLimit) return Take.USER_LIMIT;
    return Take.HELD;
  }

  /** The SKU's remaining units as last committed (no lock). */
  private static long remaining(Connection c, String tenant, String sku) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT remaining FROM sku WHERE tenant = ? AND sku = ?")) {
      ps.setString(1, tenant);
      ps.setString(2, sku);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  /** The units a buyer holds or bought of a SKU. */
  private static int held(Connection c, String tenant, String sku, String subject) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT coalesce(sum(quantity), 0) FROM reservation WHERE tenant = ? AND sku = ? AND subject = ?"
            + " AND status IN ('HELD', 'CONFIRMED')")) {
      ps.setString(1, tenant);
      ps.setString(2, sku);
      ps.setString(3, subject);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  public static void hold(Connection c, String key, String tenant, String sku, String subject, int quantity, Duration ttl)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO reservation (reservation_key, tenant, sku, subject, quantity, status, expires_at)"
            + " VALUES (?, ?, ?, ?, ?, 'HELD', now() + ? * interval '1 millisecond')")) {
      ps.setString(1, key);
      ps.setString(2, tenant);
      ps.setString(3, sku);
      ps.setString(4, subject);
      ps.setInt(5, quantity);
      ps.setLong(6, ttl.toMillis());
      ps.executeUpdate();
    }
  }

  /** HELD → CONFIRMED; false when the reservation was no longer HELD. */
  public static boolean confirm(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "UPDATE reservation SET status = 'CONFIRMED', updated_at = now() WHERE reservation_key = ? AND status = 'HELD'")) {
      ps.setString(1, key);
      return ps.executeUpdate() == 1;
    }
  }

  /** HELD → RELEASED and the units back on sale; false when it was not HELD. */
  public static boolean release(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "WITH released AS (UPDATE reservation SET status = 'RELEASED', updated_at = now()"
            + " WHERE reservation_key = ? AND status = 'HELD' RETURNING tenant, sku, quantity)"
            + " UPDATE sku SET remaining = sku.remaining + released.quantity FROM released"
            + " WHERE sku.tenant = released.tenant AND sku.sku = released.sku")) {
      ps.setString(1, key);
      return ps.executeUpdate() == 1;
    }
  }

  public static String status(Connection c, String key) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT status FROM reservation WHERE reservation_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }

  /** Units sold: reservations confirmed by a payment. */
  public static int countConfirmed(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM reservation WHERE status = 'CONFIRMED'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Σ over SKUs of total − (remaining + held + confirmed); 0 when no unit was lost or made up. */
  public static long drift(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT coalesce(sum(abs(s.total - s.remaining - coalesce(r.used, 0))), 0) FROM sku s LEFT JOIN"
            + " (SELECT tenant, sku, sum(quantity) AS used FROM reservation WHERE status IN ('HELD', 'CONFIRMED')"
            + "  GROUP BY tenant, sku) r ON r.tenant = s.tenant AND r.sku = s.sku");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** A new SKU with all of its units on sale; false when a concurrent call created it first. */
  static boolean addSku(Connection c, String tenant, String sku, int total, long unitPrice, int perUserLimit)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO sku (tenant, sku, total, remaining, unit_price, per_user_limit) VALUES (?, ?, ?, ?, ?, ?)"
            + " ON CONFLICT (tenant, sku) DO NOTHING")) {
      ps.setString(1, tenant);
      ps.setString(2, sku);
      ps.setInt(3, total);
      ps.setInt(4, total);
      ps.setLong(5, unitPrice);
      ps.setInt(6, perUserLimit);
      return ps.executeUpdate() == 1;
    }
  }

  /** A new total for a locked SKU; the caller keeps the units held or confirmed out of {@code remaining}. */
  static void resetSku(Connection c, String tenant, String sku, int total, int remaining, long unitPrice,
      int perUserLimit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("UPDATE sku SET total = ?, remaining = ?, unit_price = ?,"
        + " per_user_limit = ? WHERE tenant = ? AND sku = ?")) {
      ps.setInt(1, total);
      ps.setInt(2, remaining);
      ps.setLong(3, unitPrice);
      ps.setInt(4, perUserLimit);
      ps.setString(5, tenant);
      ps.setString(6, sku);
      ps.executeUpdate();
    }
  }
}
