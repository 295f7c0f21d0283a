package io.flashsale.persistence;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/**
 * The connection pool, migrations and a transaction helper. Errors come out classified: a
 * {@link DataError} (SQLState class 22 data exception, 23 integrity violation) is one no retry
 * fixes; any other {@link DatabaseException} (connection lost, serialization failure, pool
 * timeout, ...) is transient and worth retrying with backoff.
 */
public final class Database implements AutoCloseable {
  /**
   * How long a caller waits for a pooled connection. Below the order activities' start-to-close
   * timeout (15 s), so an attempt during an outage fails and backs off instead of timing out.
   */
  public static final java.time.Duration DEFAULT_CONNECTION_TIMEOUT = java.time.Duration.ofSeconds(5);

  @FunctionalInterface
  public interface TxWork<T> {
    T run(Connection c) throws SQLException;
  }

  private final HikariDataSource pool;

  public Database(String url, String user, String password, int maxPoolSize) {
    this(url, user, password, maxPoolSize, DEFAULT_CONNECTION_TIMEOUT);
  }

  public Database(String url, String user, String password, int maxPoolSize, java.time.Duration connectionTimeout) {
    HikariConfig cfg = new HikariConfig();
    cfg.setConnectionTimeout(connectionTimeout.toMillis());
    cfg.setJdbcUrl(url);
    cfg.setUsername(user);
    cfg.setPassword(password);
    cfg.setMaximumPoolSize(maxPoolSize);
    cfg.setPoolName("flashsale");
    this.pool = new HikariDataSource(cfg);
  }

  public DataSource dataSource() {
    return pool;
  }

  /**
   * A connection of its own on the pool's database and credentials, outside the pool: for a
   * session that lives as long as the process (StockView's LISTEN). The caller closes it.
   */
  public Connection openUnpooled(java.util.Properties extra) throws SQLException {
    java.util.Properties props = new java.util.Properties();
    props.putAll(extra);
    if (pool.getUsername() != null) props.setProperty("user", pool.getUsername());
    if (pool.getPassword() != null) props.setProperty("password", pool.getPassword());
    return java.sql.DriverManager.getConnection(pool.getJdbcUrl(), props);
  }

  public void migrate() {
    Flyway.configure().dataSource(pool).locations("classpath:db/migration").load().migrate();
  }

  /** Migrations of another component into its own schema (with its own history table there). */
  public void migrate(String location, String schema) {
    Flyway.configure().dataSource(pool).schemas(schema).locations(location).load().migrate();
  }

  /** Runs work in one transaction: commit on return, rollback on any exception. */
  public <T> T inTx(TxWork<T> work) {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      try {
        T result = work.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        try {
          c.rollback();
        } catch (SQLException rollbackFailed) {
          e.addSuppressed(rollbackFailed); // a lost connection fails both: report why the work failed
        }
        throw e;
      }
    } catch (SQLException e) {
      throw classify(e);
    }
  }

  /** Runs work on an autocommit connection (reads, single statements). */
  public <T> T read(TxWork<T> work) {
    try (Connection c = pool.getConnection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw classify(e);
    }
  }

  /** One round trip on a pooled connection: true when the database answered {@code SELECT 1}. */
  public boolean ping() {
    return read(c -> {
      try (var st = c.createStatement(); var rs = st.executeQuery("SELECT 1")) {
        return rs.next() && rs.getInt(1) == 1;
      }
    });
  }

  /** True once {@link #close()} closed the pool and its connections. */
  public boolean isClosed() {
    return pool.isClosed();
  }

  @Override
  public void close() {
    pool.close();
  }

  /** A DataError for SQLState classes 22 and 23, else a (transient) DatabaseException. */
  public static DatabaseException classify(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("22") || state.startsWith("23")) ? new DataError(e) : new DatabaseException(e);
  }

  public static class DatabaseException extends RuntimeException {
    public DatabaseException(SQLException cause) {
      super(cause.getMessage(), cause);
    }

    public String sqlState() {
      return ((SQLException) getCause()).getSQLState();
    }
  }

  /** The data itself is wrong (too long, out of range, a violated constraint): retrying cannot help. */
  public static final class DataError extends DatabaseException {
    public DataError(SQLException cause) {
      super(cause);
    }
  }
}
