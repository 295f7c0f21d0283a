package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The RESULT line between the load JVM and the bench: what one prints the other reads back whole. */
class ScenarioResultTest {
  private final ScenarioResult b1 = new ScenarioResult("b1", 2, 64, 10_000, 12.5, 800.0, "created/s", 41.5, 130.25,
      Map.of("CREATED", 9_990L, "HTTP_503", 10L), Map.of("oversell", 0.0, "sold_out p50 ms", Double.NaN),
      List.of(), "clean", List.of("stock 20000"));

  @Test
  void aResultSurvivesItsLine() {
    String line = b1.toLine();

    assertTrue(line.startsWith("RESULT {"), line);
    assertFalse(line.contains("\n"), "one line");
    ScenarioResult back = ScenarioResult.parse(line).orElseThrow();
    assertEquals(b1.scenario(), back.scenario());
    assertEquals(b1.outcomes(), back.outcomes());
    assertEquals(130.25, back.p99Ms());
    assertEquals(0.0, back.metric("oversell"));
    assertTrue(back.ok());
  }

  @Test
  void aFigureNobodyMeasuredStaysNaNAcrossTheLine() {
    ScenarioResult soldOutOnly = new ScenarioResult("b1-sold-out", 1, 4, 0, 0.1, 0, "sold_out/s", Double.NaN,
        Double.NaN, Map.of(), Map.of(), List.of("remaining -1 < 0"), "", List.of());

    ScenarioResult back = ScenarioResult.parse(soldOutOnly.toLine()).orElseThrow();
    assertTrue(Double.isNaN(back.p50Ms()));
    assertTrue(Double.isNaN(b1.metric("sold_out p50 ms")));
    assertTrue(Double.isNaN(back.metric("not reported")));
    assertFalse(back.ok());
    assertEquals(List.of("remaining -1 < 0"), back.broken());
  }

  @Test
  void otherLinesAreNoResult() {
    assertTrue(ScenarioResult.parse("b1 run 1: 10000 requests ...").isEmpty());
    assertTrue(ScenarioResult.parse("MARK start").isEmpty());
    assertTrue(ScenarioResult.parse(null).isEmpty());
    assertThrows(IllegalArgumentException.class, () -> ScenarioResult.parse("RESULT {not json"));
  }
}
