package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * pgbench's order ids must be valid ids of the service and distinct for every number: an id cut
 * to four digits once collided with an earlier order's reservation past 9 999 and aborted every
 * pgbench client. And the script must run on the migrated schema as the create does: the order's
 * number from the sequence into {@code orders.seq}.
 */
class PgbenchOrderIdTest {
  /** The API's pattern (OwnOrders.ORDER_ID, openapi.json's OrderId). */
  private static final Pattern ORDER_ID = Pattern.compile("^ord-[0-9]{4,12}$");

  @Test
  void theScriptsOrderIdIsAValidIdDistinctForAnyNumber() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start();
        Connection c = pg.getPostgresDatabase().getConnection();
        Statement st = c.createStatement()) {
      Set<String> seen = new HashSet<>();
      for (long n : new long[] {1, 7, 123, 9_999, 10_000, 12_345, 1_234_567, 999_999_999_999L}) {
        try (ResultSet rs = st.executeQuery("SELECT " + Pgbench.orderIdExpression(n + "::bigint"))) {
          rs.next();
          String id = rs.getString(1);
          assertTrue(ORDER_ID.matcher(id).matches(), "order number " + n + ": " + id);
          assertEquals(16, id.length(), "twelve digits, as the service's ids: " + id);
          assertTrue(seen.add(id), "order number " + n + " has an id of its own: " + id);
        }
      }
    }
  }

  @Test
  void theScriptRunsOnTheMigratedSchemaAndKeepsEachOrdersNumber() throws Exception {
    // ./flashsale test installs it; a missing one fails here rather than skipping the check
    assertTrue(onPath("pgbench"), "pgbench is not installed (Debian: postgresql-client)");
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start()) {
      String url = pg.getJdbcUrl("postgres", "postgres");
      try (io.flashsale.persistence.Database db = new io.flashsale.persistence.Database(url, "postgres", "postgres", 2)) {
        db.migrate();
      }
      try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
        st.execute("INSERT INTO sku (tenant, sku, total, remaining, unit_price, per_user_limit)"
            + " VALUES ('t1', 'sku-pgb', 1000, 1000, 1990, 1000)");
        st.execute("SELECT setval('order_number', 9998)"); // across ord-9999 and ord-10000
      }
      java.nio.file.Path script = java.nio.file.Files.createTempFile("pgbench-order-id-", ".sql");
      try {
        java.nio.file.Files.writeString(script, Pgbench.script("t1", "sku-pgb", "pgb-u", 5, 1990, 60_000));
        Pgbench.Target target = Pgbench.Target.of(url, "postgres", "");
        java.util.List<String> command = new java.util.ArrayList<>(Pgbench.command(target, script.toString(), 2, 1));
        int t = command.indexOf("-T");
        command.set(t, "-t"); // a number of transactions per client rather than seconds
        command.set(t + 1, "20");
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), output);
        assertEquals(40, Pgbench.parse(output).processed(), output);
      } finally {
        java.nio.file.Files.deleteIfExists(script);
      }
      try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT order_id, seq FROM orders ORDER BY seq")) {
        int rows = 0;
        while (rs.next()) {
          rows++;
          String id = rs.getString(1);
          assertTrue(ORDER_ID.matcher(id).matches(), id);
          assertEquals(rs.getLong(2), Long.parseLong(id.substring(4)), "the script's id spells its number: " + id);
        }
        assertEquals(40, rows);
      }
    }
  }

  private static boolean onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, program))) return true;
    }
    return false;
  }
}
