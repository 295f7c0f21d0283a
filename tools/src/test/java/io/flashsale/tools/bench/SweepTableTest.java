package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The sweep's table and the series its plot draws. */
class SweepTableTest {
  private final List<SweepPoint> points = List.of(
      new SweepPoint(4, 100, "b1", 2000, 50.0, 900.0, 12.5, 40.0, 2000.0),
      new SweepPoint(1, 100, "b1", 300, 20.0, Double.NaN, 30.0, 60.0, 500.0),
      new SweepPoint(1, 100, "b2", 100, 8.0, 0, 100.0, 150.0, 500.0));

  @Test
  void everyPointIsARowWithItsRatioToTheCeiling() {
    String md = SweepTable.markdown(points);

    String[] lines = md.split("\n");
    assertEquals(2 + points.size(), lines.length, md);
    assertEquals("| b1 | 4 | 100 | 2000 | 50.0 | 900 | 12.5 | 40.0 | 2000 | 0.025 |", lines[2]);
    assertTrue(lines[3].contains("| – |"), "a figure nobody measured is a dash: " + lines[3]);
  }

  @Test
  void theSeriesAreSortedByClientsAndTheCeilingComesOnce() {
    Map<String, List<double[]>> s = SweepTable.series(points, false);

    assertEquals(List.of("b1 stock=100 /s", "b2 stock=100 /s", "JDBC ceiling /s"), List.copyOf(s.keySet()));
    assertEquals(1.0, s.get("b1 stock=100 /s").get(0)[0]);
    assertEquals(4.0, s.get("b1 stock=100 /s").get(1)[0]);
    assertEquals(2, s.get("JDBC ceiling /s").size());
    assertEquals(60.0, SweepTable.series(points, true).get("b1 stock=100 p99 ms").get(0)[1]);
  }
}
