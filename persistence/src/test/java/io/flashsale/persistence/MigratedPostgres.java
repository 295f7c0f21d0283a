package io.flashsale.persistence;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One real PostgreSQL for a test class, migrated as production migrates it: started before the
 * class's first test, stopped after its last. Register it as a static field with
 * {@code @RegisterExtension}; tests keep apart by using their own SKUs, subjects and order ids.
 */
public final class MigratedPostgres implements BeforeAllCallback, AfterAllCallback {
  private static final String USER = "postgres";

  private EmbeddedPostgres postgres;
  private Database db;

  @Override
  public void beforeAll(ExtensionContext context) throws IOException {
    postgres = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start();
    db = newDatabase(2, Database.DEFAULT_CONNECTION_TIMEOUT);
    db.migrate();
  }

  @Override
  public void afterAll(ExtensionContext context) throws IOException {
    if (db != null) db.close();
    if (postgres != null) postgres.close();
  }

  public Database db() {
    return db;
  }

  /** Another pool on the same server, for a test that needs its own pool settings. */
  public Database newDatabase(int maxPoolSize, Duration connectionTimeout) {
    return new Database(postgres.getJdbcUrl(USER, USER), USER, USER, maxPoolSize, connectionTimeout);
  }

  /** A connection from outside every pool, to act on a pooled connection as an operator would. */
  public Connection outsideConnection() throws SQLException {
    return postgres.getPostgresDatabase().getConnection();
  }

  /** The single number a query answers (a count, a sum). */
  public long number(String sql, Object... params) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < params.length; i++) ps.setObject(i + 1, params[i]);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
  }
}
