package io.flashsale.activities;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;

/** The connection pool, migrations and a transaction helper. */
public final class Database implements AutoCloseable {

  @FunctionalInterface
  public interface TxWork<T> {
    T run(Connection c) throws SQLException;
  }

  private final HikariDataSource pool;

  public Database(String url, String user, String password, int maxPoolSize) {
    HikariConfig cfg = new HikariConfig();
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
        c.rollback();
        throw e;
      }
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  /** Runs work on an autocommit connection (reads, single statements). */
  public <T> T read(TxWork<T> work) {
    try (Connection c = pool.getConnection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw new DatabaseException(e);
    }
  }

  @Override
  public void close() {
    pool.close();
  }

  public static final class DatabaseException extends RuntimeException {
    public DatabaseException(SQLException cause) {
      super(cause.getMessage(), cause);
    }
  }
}
