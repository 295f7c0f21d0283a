package io.flashsale.activities;

import java.sql.PreparedStatement;
import java.sql.ResultSet;

/** SKU administration and the cheap stock read behind the API's sold-out gate. */
public final class Skus {
  private final Database db;

  public Skus(Database db) {
    this.db = db;
  }

  /**
   * Creates the SKU or resets its total; units already held or confirmed stay counted, so the
   * conservation equation keeps holding.
   */
  public void upsert(String tenant, String sku, int total, long unitPrice, int perUserLimit) {
    db.inTx(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO sku (tenant, sku, total, remaining, unit_price, per_user_limit) VALUES (?, ?, ?, ?, ?, ?)"
              + " ON CONFLICT (tenant, sku) DO UPDATE SET total = EXCLUDED.total,"
              + " remaining = EXCLUDED.total - (SELECT coalesce(sum(quantity), 0) FROM reservation r"
              + "   WHERE r.tenant = EXCLUDED.tenant AND r.sku = EXCLUDED.sku AND r.status IN ('HELD', 'CONFIRMED')),"
              + " unit_price = EXCLUDED.unit_price, per_user_limit = EXCLUDED.per_user_limit")) {
        ps.setString(1, tenant);
        ps.setString(2, sku);
        ps.setInt(3, total);
        ps.setInt(4, total);
        ps.setLong(5, unitPrice);
        ps.setInt(6, perUserLimit);
        return ps.executeUpdate();
      }
    });
  }

  /** Remaining units, or -1 when the SKU does not exist. */
  public int remaining(String tenant, String sku) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT remaining FROM sku WHERE tenant = ? AND sku = ?")) {
        ps.setString(1, tenant);
        ps.setString(2, sku);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getInt(1) : -1;
        }
      }
    });
  }
}
