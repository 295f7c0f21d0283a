package io.flashsale.devstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.codahale.metrics.health.HealthCheck;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
      try (Connection c = DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres")) {
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
  void aPostmasterThatCameUpAfterPgCtlGaveUpWaitingIsAdoptedNotStartedAgainUntilTheSupervisorGivesUp() throws Exception {
    Path data = dir.resolve("postgres");
    // pg_ctl -t 0 gives up at once, as -t 60 does on a crash recovery longer than a minute: the server comes up anyway
    SupervisedPostgres pg = SupervisedPostgres.start(new SupervisedPostgres.Settings(data, 0, false, true), 0);
    try {
      long killed = pg.pid();
      await(() -> accepts(pg.jdbcUrl()), 60_000, "the postmaster did not accept connections");
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement st = c.createStatement()) {
        st.execute("CREATE TABLE kept (n int)");
        st.execute("INSERT INTO kept VALUES (7)");
      }
      signal("KILL", killed);
      await(() -> pg.state().up() && pg.pid() != killed, 120_000, "the postmaster that came up was not adopted");
      SupervisedPostgres.State s = pg.state();
      System.out.println("adopted postmaster pid " + s.pid() + " after killing " + killed + ", restarts " + s.restarts());
      assertFalse(s.gaveUp(), "the supervisor did not give up");
      assertEquals(1, s.restarts(), "one restart, not one per failed pg_ctl start");
      assertEquals(Optional.of(s.pid()), SupervisedPostgres.pidInFile(data), "the one postmaster.pid names");
      HealthCheck.Result up = pg.healthCheck().execute();
      assertTrue(up.isHealthy(), up.toString());
      // the check follows the postmaster's process; after a SIGKILL it replays its WAL before it listens,
      // which on a loaded machine outlasts the adoption
      await(() -> accepts(pg.jdbcUrl()), 60_000, "the adopted postmaster did not accept connections");
      try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
        assertEquals(7L, scalar(c, "SELECT n FROM kept"));
      }
    } finally {
      pg.close();
    }
    assertTrue(SupervisedPostgres.pidInFile(data).filter(SupervisedPostgres::running).isEmpty(), "stopped at close");
  }

  @Test
  void unsupervisedTheHealthCheckFollowsAPostmasterStartedAgainByHand() throws Exception {
    Path data = dir.resolve("postgres");
    SupervisedPostgres pg = SupervisedPostgres.start(new SupervisedPostgres.Settings(data, 0, false, false));
    try {
      long killed = pg.pid();
      List<String> argv = List.of(new String(Files.readAllBytes(Path.of("/proc", String.valueOf(killed), "cmdline")),
          StandardCharsets.UTF_8).split("\0"));
      Path bin = Path.of(argv.get(0)).getParent();
      List<String> options = argv.subList(argv.indexOf("-D") + 2, argv.size());
      List<ProcessHandle> processes = new ArrayList<>(ProcessHandle.of(killed).orElseThrow().children().toList());
      signal("KILL", killed);
      await(() -> processes.stream().noneMatch(h -> SupervisedPostgres.running(h.pid()))
          && !SupervisedPostgres.running(killed), 60_000, "the killed postmaster's backends did not exit");
      HealthCheck.Result down = pg.healthCheck().execute();
      assertFalse(down.isHealthy(), down.toString());
      // as an operator (or X-01's PostgresProcess.restart) would; PostgreSQL refuses the directory while the
      // dead postmaster is an unreaped zombie (its lock file's pid still answers), as the supervisor's restart sees
      int attempts = 1;
      while (pgCtl(bin, data, "-l", dir.resolve("manual.log").toString(), "-w", "-t", "60", "-o",
          SupervisedPostgres.shellWords(options), "start") != 0) {
        if (attempts == 1) System.out.println("manual pg_ctl start refused: " + Files.readString(dir.resolve("manual.log")));
        assertTrue(attempts++ < 120, "pg_ctl start never succeeded");
        Thread.sleep(500);
      }
      System.out.println("manual pg_ctl start succeeded at attempt " + attempts);
      long restarted = SupervisedPostgres.pidInFile(data).orElseThrow();
      HealthCheck.Result up = pg.healthCheck().execute();
      assertTrue(up.isHealthy(), up.toString());
      assertTrue(up.getMessage().contains("pid " + restarted), up.getMessage());
      assertEquals(restarted, pg.pid());
    } finally {
      pg.close();
    }
    assertTrue(SupervisedPostgres.pidInFile(data).filter(SupervisedPostgres::running).isEmpty(), "stopped at close");
  }

  @Test
  void optionsWithSpacesAndQuotesReachThePostmasterAsTheyWere() throws Exception {
    List<String> options = List.of("-p", "5432", "-c", "application_name=flash sale", "-c", "cluster_name=it's \"x\" $HOME");
    // pg_ctl puts -o into a /bin/sh command line: the shell must give back the same words
    Process sh = new ProcessBuilder("/bin/sh", "-c", "printf '%s\\n' " + SupervisedPostgres.shellWords(options))
        .redirectErrorStream(true).start();
    String out = new String(sh.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, sh.waitFor());
    assertEquals(options, out.lines().toList());
  }

  @Test
  void closeDuringARestartReturnsAndLeavesNoPostmasterRunning() throws Exception {
    Path data = dir.resolve("postgres");
    SupervisedPostgres pg = SupervisedPostgres.start(new SupervisedPostgres.Settings(data, 0, false, true));
    long killed = pg.pid();
    // a stopped backend of the dead postmaster holds the shared memory: every start attempt fails until it goes
    Connection held = DriverManager.getConnection(pg.jdbcUrl());
    long backend = scalar(held, "SELECT pg_backend_pid()");
    signal("STOP", backend);
    java.util.concurrent.atomic.AtomicReference<Exception> closeFailure = new java.util.concurrent.atomic.AtomicReference<>();
    Thread closing = new Thread(() -> {
      try {
        pg.close();
      } catch (Exception e) {
        closeFailure.set(e);
      }
    }, "closing");
    try {
      signal("KILL", killed);
      await(() -> !pg.state().up() && pg.state().restarts() == 1, 30_000, "no restart began");
      closing.start();
      closing.join(120_000); // a start attempt fails within seconds; wide for a loaded machine
      assertFalse(closing.isAlive(), "close() returned while a restart was under way");
      assertEquals(null, closeFailure.get(), "close() did not throw");
    } finally {
      signal("CONT", backend);
      try {
        held.close();
      } catch (SQLException broken) {
        // its backend is gone
      }
    }
    Thread.sleep(1_000); // a few polls of a supervisor that would still be watching
    Optional<Long> inFile = SupervisedPostgres.pidInFile(data);
    System.out.println("after close: postmaster.pid names " + inFile + ", restarts " + pg.state().restarts());
    assertTrue(inFile.filter(SupervisedPostgres::running).isEmpty(), "no postmaster runs after close: " + inFile);
  }

  @Test
  void settingsReplaceTheirEarlierValuesInThePostmastersOptions() {
    List<String> options = List.of("-p", "5432", "-F", "-c", "fsync=off", "-c", "timezone=UTC", "-c", "full_page_writes=off");
    assertEquals(List.of("-p", "5432", "-F", "-c", "timezone=UTC", "-c", "synchronous_commit=on", "-c", "fsync=on",
        "-c", "full_page_writes=on", "-c", "listen_addresses=127.0.0.1"),
        SupervisedPostgres.withSettings(options, SupervisedPostgres.serverConfig(true)));
  }

  @Test
  void aPortAnotherPostgresHoldsFailsTheStartInsteadOfServingThatOnesData() throws Exception {
    SupervisedPostgres other = SupervisedPostgres.start(new SupervisedPostgres.Settings(dir.resolve("other"), 0, false, false));
    try {
      Exception failed = null;
      SupervisedPostgres pg = null;
      try {
        pg = SupervisedPostgres.start(new SupervisedPostgres.Settings(dir.resolve("postgres"), other.port(), false, false));
      } catch (Exception e) {
        failed = e;
      } finally {
        if (pg != null) pg.close();
      }
      // the new postmaster cannot bind the port and exits; the library's readiness check reaches the
      // other one (before, on "localhost", it could have listened on ::1 alone and started)
      assertTrue(failed != null, "started on a port another PostgreSQL holds, serving that one's data");
      assertTrue(other.state().up(), "the other PostgreSQL is left running");
      // the check that tells them apart, whether or not the new postmaster is still there
      IOException notOurs = assertThrows(IOException.class,
          () -> SupervisedPostgres.requireOwnServer(other.port(), Files.createDirectories(dir.resolve("postgres"))));
      assertTrue(notOurs.getMessage().contains("held by another PostgreSQL"), notOurs.getMessage());
      SupervisedPostgres.requireOwnServer(other.port(), dir.resolve("other"));
    } finally {
      other.close();
    }
  }

  @Test
  void theJdbcUrlNamesTheOneAddressThePostmasterListensOn() throws Exception {
    SupervisedPostgres pg = SupervisedPostgres.start(new SupervisedPostgres.Settings(dir.resolve("postgres"), 0, false, false));
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
      assertTrue(pg.jdbcUrl().startsWith("jdbc:postgresql://127.0.0.1:" + pg.port() + "/"), pg.jdbcUrl());
      try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW listen_addresses")) {
        rs.next();
        assertEquals("127.0.0.1", rs.getString(1));
      }
    } finally {
      pg.close();
    }
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

  private int pgCtl(Path bin, Path data, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    if ("root".equals(System.getProperty("user.name"))) cmd.addAll(List.of("unshare", "-U"));
    cmd.addAll(List.of(bin.resolve("pg_ctl").toString(), "-D", data.toString()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("pg_ctl.out").toFile())
        .start().waitFor();
  }

  private static void await(BooleanSupplier condition, long timeoutMs, String failure) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) throw new AssertionError(failure + " within " + timeoutMs + " ms");
      Thread.sleep(50);
    }
  }

  private static boolean accepts(String jdbcUrl) {
    try (Connection c = DriverManager.getConnection(jdbcUrl)) {
      return c.isValid(5);
    } catch (java.sql.SQLException refused) {
      return false;
    }
  }
}
