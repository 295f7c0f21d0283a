package io.flashsale.persistence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/** One SKU's units as the tables hold them; every unit is remaining, held or confirmed. */
public record Stock(int total, int remaining, int held, int confirmed) {

  public static Stock of(Connection c, String tenant, String sku) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT s.total, s.remaining,"
        + " coalesce(sum(r.quantity) FILTER (WHERE r.status = 'HELD'), 0),"
        + " coalesce(sum(r.quantity) FILTER (WHERE r.status = 'CONFIRMED'), 0)"
        + " FROM sku s LEFT JOIN reservation r ON r.tenant = s.tenant AND r.sku = s.sku"
        + " WHERE s.tenant = ? AND s.sku = ? GROUP BY s.total, s.remaining")) {
      ps.setString(1, tenant);
      ps.setString(2, sku);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Stock(rs.getInt(1), rs.getInt(2), rs.getInt(3), rs.getInt(4));
      }
    }
  }

  public boolean balanced() {
    return total == remaining + held + confirmed;
  }

  public Stock confirmingOne() {
    return new Stock(total, remaining, held - 1, confirmed + 1);
  }

  public Stock releasingOne() {
    return new Stock(total, remaining + 1, held - 1, confirmed);
  }

  /** A new reservation taken and confirmed at once. */
  public Stock sellingOneMore() {
    return new Stock(total, remaining - 1, held, confirmed + 1);
  }
}
