package io.flashsale.persistence;

import java.sql.PreparedStatement;
import java.sql.ResultSet;

/** SKU administration and the cheap stock read behind the API's sold-out gate. */
public final class Skus {
  private final Database db;

  public Skus(Database db) {
    this.db = db;
  }

  /** A SKU's price and per-buyer limit, and the transaction's start, read by a create. */
  public record Terms(long unitPrice, int perUserLimit, String now) {}

  /**
   * The SKU's terms, or null for an unknown SKU. {@code now} is the transaction's start: the
   * created_at and the first transition's time of an order inserted in the same transaction, so the
   * create's answer carries them without another round trip.
   */
  public static Terms terms(java.sql.Connection c, String tenant, String sku) throws java.sql.SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT unit_price, per_user_limit, now() FROM sku WHERE tenant = ? AND sku = ?")) {
      ps.setString(1, tenant);
      ps.setString(2, sku);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) return null;
        return new Terms(rs.getLong(1), rs.getInt(2), rs.getTimestamp(3).toInstant().toString());
      }
    }
  }

  /** What {@link #upsert} did: CREATED / UPDATED, or refused (NEEDS_PRICE_AND_LIMIT, BELOW_HELD) with nothing changed. */
  public record Upsert(String outcome, int total, int remaining, long unitPrice, int perUserLimit, int held) {
    public static final String CREATED = "CREATED";
    public static final String UPDATED = "UPDATED";
    public static final String NEEDS_PRICE_AND_LIMIT = "NEEDS_PRICE_AND_LIMIT";
    public static final String BELOW_HELD = "BELOW_HELD";
  }

  /**
   * Creates the SKU or resets its total; units already held or confirmed stay counted, so the
   * conservation equation keeps holding. A null price or limit keeps the current one (a new SKU
   * needs both). The SKU row is locked first, so no reservation can slip in between the count of
   * held units and the new total.
   */
  public Upsert upsert(String tenant, String sku, int total, Long unitPrice, Integer perUserLimit) {
    return db.inTx(c -> {
      Row current = locked(c, tenant, sku);
      if (current == null) {
        if (unitPrice == null || perUserLimit == null) {
          return new Upsert(Upsert.NEEDS_PRICE_AND_LIMIT, 0, 0, 0, 0, 0);
        }
        if (Inventory.addSku(c, tenant, sku, total, unitPrice, perUserLimit)) {
          return new Upsert(Upsert.CREATED, total, total, unitPrice, perUserLimit, 0);
        }
        current = locked(c, tenant, sku); // created by a concurrent call a moment ago
      }
      int held;
      try (PreparedStatement ps = c.prepareStatement("SELECT coalesce(sum(quantity), 0) FROM reservation"
          + " WHERE tenant = ? AND sku = ? AND status IN ('HELD', 'CONFIRMED')")) {
        ps.setString(1, tenant);
        ps.setString(2, sku);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          held = rs.getInt(1);
        }
      }
      if (total < held) {
        return new Upsert(Upsert.BELOW_HELD, current.total(), current.remaining(), current.unitPrice(),
            current.perUserLimit(), held);
      }
      long price = unitPrice == null ? current.unitPrice() : unitPrice;
      int limit = perUserLimit == null ? current.perUserLimit() : perUserLimit;
      Inventory.resetSku(c, tenant, sku, total, total - held, price, limit);
      return new Upsert(Upsert.UPDATED, total, total - held, price, limit, held);
    });
  }

  private record Row(int total, int remaining, long unitPrice, int perUserLimit) {}

  private static Row locked(java.sql.Connection c, String tenant, String sku) throws java.sql.SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT total, remaining, unit_price, per_user_limit FROM sku"
        + " WHERE tenant = ? AND sku = ? FOR UPDATE")) {
      ps.setString(1, tenant);
      ps.setString(2, sku);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) return null;
        return new Row(rs.getInt(1), rs.getInt(2), rs.getLong(3), rs.getInt(4));
      }
    }
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
