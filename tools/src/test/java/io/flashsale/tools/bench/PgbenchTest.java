package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** pgbench beside the service: where it connects, what it runs, what its output says. */
class PgbenchTest {
  private static final String OUTPUT = """
      pgbench (15.18 (Debian 15.18-0+deb12u1))
      transaction type: /tmp/flashsale-admission-1.sql
      scaling factor: 1
      query mode: prepared
      number of clients: 64
      number of threads: 2
      maximum number of tries: 1
      duration: 8 s
      number of transactions actually processed: 25213
      number of failed transactions: 0 (0.000%)
      latency average = 20.318 ms
      initial connection time = 103.550 ms
      tps = 3149.925312 (without initial connection time)
      """;

  @Test
  void theSummaryIsReadFromPgbenchsLastLines() {
    Pgbench.Summary s = Pgbench.parse(OUTPUT);

    assertEquals(3149.925312, s.tps(), 1e-9);
    assertEquals(25213, s.processed());
    assertEquals(0, s.failed());
    assertEquals(20.318, s.latencyAverageMs(), 1e-9);
  }

  @Test
  void anOutputWithoutTpsIsAFailureNotAZero() {
    assertThrows(IllegalArgumentException.class, () -> Pgbench.parse("pgbench: error: connection refused"));
  }

  @Test
  void theTargetComesFromTheJdbcUrl() {
    assertEquals(new Pgbench.Target("localhost", 44763, "postgres", "postgres", ""),
        Pgbench.Target.of("jdbc:postgresql://localhost:44763/postgres?user=postgres", "nobody", ""));
    assertEquals(new Pgbench.Target("db", 5432, "flash", "app", "s3cret"),
        Pgbench.Target.of("jdbc:postgresql://db/flash?password=s3cret", "app", ""));
  }

  @Test
  void theCommandRunsPreparedWithoutVacuumAtMostTwoThreads() {
    Pgbench.Target t = new Pgbench.Target("localhost", 5555, "postgres", "postgres", "");

    List<String> c = Pgbench.command(t, "/tmp/s.sql", 64, 8);
    assertEquals(List.of("pgbench", "-n", "-M", "prepared", "-T", "8", "-c", "64", "-j", "2", "-f", "/tmp/s.sql",
        "-h", "localhost", "-p", "5555", "-U", "postgres", "postgres"), c);
    assertTrue(Pgbench.command(t, "/tmp/s.sql", 1, 8).containsAll(List.of("-c", "1", "-j")));
    assertEquals("1", Pgbench.command(t, "/tmp/s.sql", 1, 8).get(9));
  }

  @Test
  void theScriptRunsTheAdmissionStatementsInTheirOrderInOneTransaction() {
    String script = Pgbench.script("t1", "bench-pgb-1", "pgb-u", 50, 1990, 60_000);

    // Inventory.take sums the buyer's units before the decrement and again after it
    List<String> order = List.of("BEGIN;", "FROM orders WHERE tenant", "SELECT unit_price, per_user_limit, now() FROM sku",
        "SELECT coalesce(sum(quantity), 0) FROM reservation", "UPDATE sku SET remaining = remaining - 1",
        "SELECT coalesce(sum(quantity), 0) FROM reservation", "nextval('order_number')", "INSERT INTO reservation",
        "INSERT INTO orders", "INSERT INTO order_transition", "COMMIT;");
    int at = -1;
    for (String s : order) {
      int next = script.indexOf(s, at + 1);
      assertTrue(next > at, s + " in order in\n" + script);
      at = next;
    }
    assertTrue(script.contains("random(0, 49)"), "50 buyers");
    assertTrue(script.contains("workflow_id, seq) VALUES") && script.contains("'bench-pgbench', :n);"),
        "the order keeps its number, as the create's insert does");
    assertTrue(script.contains("'bench-pgb-1'"));
  }

  @Test
  void anAbortedClientsErrorIsQuotedOnceEvenWhenEveryClientHitIt() {
    String out = String.join("\n",
        "pgbench: error: client 3 script 0 aborted in command 7 query 0: ERROR:  duplicate key value violates unique constraint \"orders_pkey\"",
        "pgbench: error: client 9 script 0 aborted in command 7 query 0: ERROR:  duplicate key value violates unique constraint \"orders_pkey\"",
        "tps = 18.0 (without initial connection time)");
    assertEquals("client script 0 aborted in command 7 query 0: ERROR:  duplicate key value violates unique constraint \"orders_pkey\"",
        Pgbench.errors(out));
    assertEquals("no error line", Pgbench.errors("tps = 300.0 (without initial connection time)"));
  }
}
