package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EngineComparisonTest {
  private static final String DEV_SERVER = """
      run 1:
        b1          99.0 created/s, p50 1.0 ms, p99 2.0 ms; cpu per created order: jvm 1 ms, client 1 ms
      medians over 1 run:
        engine      34.9 workflows/s, p50 1351.7 ms, p99 6511.8 ms; cpu per order-shaped workflow: jvm 14 ms, temporal 26 ms, postgres 0.71 ms, client 6.7 ms
        b1          35.6 created/s, p50 1335.3 ms, p99 5046.3 ms; cpu per created order: jvm 35 ms, temporal 41 ms, postgres 4.0 ms, client 8.6 ms
        b2          12.5 PAID orders/s, p50 2879.2 ms, p99 5373.1 ms; cpu per PAID order: jvm 60 ms, temporal 63 ms, postgres 7.5 ms, client 13 ms
        b1 oversell                               0.0
        b1 fsync on 20.0 created/s, p50 1.0 ms, p99 3.0 ms; cpu per created order: jvm 40 ms
      invariants held in every run; reconcile clean after every scenario
      """;
  private static final String CLUSTER = """
      medians over 3 runs:
        b1          20.5 created/s, p50 900.0 ms, p99 3000.5 ms; cpu per created order: jvm 30 ms, temporal 50 ms, temporal-postgres 25 ms, postgres 4.2 ms, client 8.0 ms
        b2          no rate (no run finished)
      """;

  @Test
  void readsTheLastMediansSectionOnly() {
    Map<String, EngineComparison.Row> rows = EngineComparison.medians(DEV_SERVER);
    assertEquals(List.of("engine", "b1", "b2", "b1 fsync on"), List.copyOf(rows.keySet()));
    assertEquals(20.0, rows.get("b1 fsync on").rate(), "a label of several words");
    EngineComparison.Row b2 = rows.get("b2");
    assertEquals(12.5, b2.rate());
    assertEquals("PAID orders/s", b2.unit());
    assertEquals(5373.1, b2.p99Ms());
    assertEquals(Map.of("jvm", 60.0, "temporal", 63.0, "postgres", 7.5, "client", 13.0), b2.cpuMsPerOperation());
    assertEquals(35.6, rows.get("b1").rate(), "the medians, not run 1's line");
    assertTrue(EngineComparison.medians("no medians here\n").isEmpty());
  }

  @Test
  void putsEachScenarioBothReportsHaveSideBySide() {
    List<String> table = EngineComparison.table("dev server", EngineComparison.medians(DEV_SERVER), "cluster",
        EngineComparison.medians(CLUSTER));
    assertEquals(3, table.size(), String.join("\n", table)); // the head and b1 twice: b2 has no rate on the cluster
    assertTrue(table.get(0).contains("temporal-postgres"), table.get(0));
    assertTrue(table.get(1).contains("35.6 created/s") && table.get(1).contains("dev server"), table.get(1));
    assertTrue(table.get(2).contains("20.5 created/s") && table.get(2).contains(" 25 "), table.get(2));
    // every part summed: 30 + 50 + 25 + 4.2 + 8.0
    assertTrue(table.get(2).trim().endsWith("117"), table.get(2));
    assertTrue(table.get(1).trim().endsWith("89"), table.get(1)); // 35 + 41 + 4.0 + 8.6 = 88.6
  }
}
