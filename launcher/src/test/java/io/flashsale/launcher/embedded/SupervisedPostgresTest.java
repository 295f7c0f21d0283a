package io.flashsale.launcher.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.health.HealthCheck;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local PostgreSQL is started again when its postmaster dies, and not while the service stops. */
class SupervisedPostgresTest {
  @TempDir Path dir;

  @Test
  void aKilledPostmasterIsStartedAgainOnTheSameDirectoryAndPortOnceItsBackendsAreGone() throws Exception {
    Path data = dir.resolve("postgres");
    SupervisedPostgres pg = SupervisedPostgres.start(new SupervisedPostgres.Settings(data, 0, false, true));
    long restarted;
    try {
      long killed = pg.pid();
      int port = pg.port();
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE kept (n int)");
        st.execute("INSERT INTO kept VALUES (42)");
      }
      // a backend of the dead postmaster that has not exited yet keeps the shared memory: a stopped one
      // holds PostgreSQL's guard closed until it is let go, so the outage lasts as long as this test wants
      Connection held = DriverManager.getConnection(pg.jdbcUrl());
      long backend = scalar(held, "SELECT pg_backend_pid()");
      signal("STOP", backend);
      try {
        signal("KILL", killed);
        await(() -> !pg.state().up(), 30_000, "the supervisor never saw the postmaster die");
        HealthCheck.Result down = pg.healthCheck().execute();
        assertFalse(down.isHealthy(), down.toString());
        assertTrue(down.getMessage().contains("pid " + killed + " is down"), down.getMessage());
      } finally {
        signal("CONT", backend); // it notices its postmaster died and exits
        try {
          held.close();
        } catch (SQLException broken) {
          // its backend is gone
        }
      }
      await(() -> pg.state().up(), 120_000, "PostgreSQL was not started again");
      restarted = pg.pid();
      assertNotEquals(killed, restarted, "a new postmaster");
      assertEquals(port, pg.port());
      try (Connection c = DriverManager.getConnection("jdbc:postgresql://localhost:" + port + "/postgres?user=postgres")) {
        assertEquals(42L, scalar(c, "SELECT n FROM kept"), "the same data directory, on the same port");
      }
      HealthCheck.Result up = pg.healthCheck().execute();
      assertTrue(up.isHealthy(), up.toString());
      assertEquals(1, up.getDetails().get("restarts"));
    } finally {
      pg.close();
    }
    assertFalse(SupervisedPostgres.running(restarted), "stopped at close");
    Thread.sleep(1_000); // a few polls of a supervisor that would still be watching
    assertEquals(java.util.Optional.empty(), SupervisedPostgres.pidInFile(data), "not started again during the stop");
  }

  @Test
  void settingsReplaceTheirEarlierValuesInThePostmastersOptions() {
    List<String> options = List.of("-p", "5432", "-F", "-c", "fsync=off", "-c", "timezone=UTC", "-c", "full_page_writes=off");
    assertEquals(List.of("-p", "5432", "-F", "-c", "timezone=UTC", "-c", "synchronous_commit=on", "-c", "fsync=on",
        "-c", "full_page_writes=on"), SupervisedPostgres.withSettings(options, SupervisedPostgres.serverConfig(true)));
  }

  private static long scalar(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void signal(String name, long pid) throws Exception {
    int exit = new ProcessBuilder("kill", "-" + name, String.valueOf(pid)).inheritIO().start().waitFor();
    assertEquals(0, exit, "kill -" + name + " " + pid);
  }

  private static void await(BooleanSupplier condition, long timeoutMs, String failure) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) throw new AssertionError(failure + " within " + timeoutMs + " ms");
      Thread.sleep(50);
    }
  }
}
