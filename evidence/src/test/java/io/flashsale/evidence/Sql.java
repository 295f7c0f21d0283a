package io.flashsale.evidence;

import io.flashsale.persistence.Database;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Read-only SQL for assertions: the experiments look at the real tables. */
public final class Sql {
  private final Database db;

  public Sql(Database db) {
    this.db = db;
  }

  /**
   * A read on the service's pool. A pooled connection whose server went away (an experiment that
   * kills PostgreSQL: SQLState 08xxx, 57Pxx) fails once when next used; the read is tried again on
   * another for up to 10 s, as the service's own steps are. Any other error is the experiment's.
   */
  private <T> T read(Database.TxWork<T> work) {
    long deadline = System.currentTimeMillis() + 10_000;
    while (true) {
      try {
        return db.read(work);
      } catch (Database.DatabaseException e) {
        String state = e.sqlState();
        boolean connectionLost = state != null && (state.startsWith("08") || state.startsWith("57P"));
        if (!connectionLost || System.currentTimeMillis() > deadline) throw e;
        try {
          Thread.sleep(200);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  public long count(String sql, Object... args) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        bind(ps, args);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
  }

  public String text(String sql, Object... args) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        bind(ps, args);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getString(1) : null;
        }
      }
    });
  }

  public List<String> column(String sql, Object... args) {
    return read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        bind(ps, args);
        List<String> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) out.add(rs.getString(1));
        }
        return out;
      }
    });
  }

  /** Histogram of the first column: {PAID=1, DUPLICATE PAID=15}. */
  public Map<String, Integer> histogram(String sql, Object... args) {
    Map<String, Integer> out = new TreeMap<>();
    for (String v : column(sql, args)) out.merge(String.valueOf(v), 1, Integer::sum);
    return out;
  }

  /** The seed's timeline notation for one order, from order_transition. */
  public String timeline(String orderId) {
    return String.join(" ", column(
        "SELECT '[' || coalesce(from_status, '-') || '->' || to_status || ' v' || version || ' ' || cause || ']'"
            + " FROM order_transition WHERE order_id = ? ORDER BY version", orderId));
  }

  public int remaining(String sku) {
    return (int) count("SELECT remaining FROM sku WHERE tenant = 't1' AND sku = ?", sku);
  }

  private static void bind(PreparedStatement ps, Object[] args) throws java.sql.SQLException {
    for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
  }
}
