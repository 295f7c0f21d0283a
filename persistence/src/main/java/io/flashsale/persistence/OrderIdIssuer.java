package io.flashsale.persistence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Issues order ids in the create's transaction: the next number of the {@code order_number}
 * sequence and its id under the database's own key ({@link OrderIds}). The key is made once per
 * database by migration V8 (table {@code order_id_key}), so there is no setting to forget; it is
 * read at the first id and kept for the life of this issuer.
 */
public final class OrderIdIssuer {

  /** A new order's sequence number (its creation order, {@code orders.seq}) and its id. */
  public record Issued(long seq, String orderId) {}

  private volatile OrderIds ids;

  /**
   * Takes the next number; sequences are not rolled back, so a transaction that rolls back after
   * this leaves a gap, which is harmless.
   */
  public Issued next(Connection c) throws SQLException {
    OrderIds keyed = ids(c);
    long seq;
    try (PreparedStatement ps = c.prepareStatement("SELECT nextval('order_number')");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      seq = rs.getLong(1);
    }
    return new Issued(seq, keyed.id(seq));
  }

  private OrderIds ids(Connection c) throws SQLException {
    OrderIds keyed = ids;
    if (keyed == null) {
      keyed = new OrderIds(key(c)); // two first creates at once both read the same row: no harm
      ids = keyed;
    }
    return keyed;
  }

  /** The database's order id key (one row, made by migration V8). */
  static byte[] key(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT key FROM order_id_key");
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) throw new IllegalStateException("order_id_key has no row: migration V8 makes it, nothing deletes it");
      return rs.getBytes(1);
    }
  }
}
