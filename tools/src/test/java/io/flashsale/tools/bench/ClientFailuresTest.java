package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A request without an answer is an outcome the load counts, never an exception that ends it. */
class ClientFailuresTest {

  @Test
  void aTimeoutAnywhereAmongTheCausesIsAClientTimeout() {
    assertEquals("CLIENT_TIMEOUT", ClosedLoop.failure(new UncheckedIOException(new HttpTimeoutException("request timed out"))));
    assertEquals("CLIENT_TIMEOUT", ClosedLoop.failure(new HttpTimeoutException("x")));
    assertEquals("CLIENT_TIMEOUT", ClosedLoop.failure(new RuntimeException(new java.util.concurrent.TimeoutException("30000 ms elapsed"))));
    assertEquals("CLIENT_IO_ERROR", ClosedLoop.failure(new UncheckedIOException(new ConnectException("refused"))));
    assertEquals("CLIENT_IO_ERROR", ClosedLoop.failure(new IOException("reset")));
    assertEquals("ERROR_IllegalStateException", ClosedLoop.failure(new IllegalStateException("bug")));
  }

  @Test
  void aCallThatThrowsIsTimedAsItsFailure() {
    Timed t = ClosedLoop.timed(() -> {
      throw new UncheckedIOException(new HttpTimeoutException("request timed out"));
    });
    assertEquals("CLIENT_TIMEOUT", t.outcome());
    assertTrue(ClosedLoop.noAnswer(t.outcome()));
  }

  @Test
  void theClosedLoopCountsFailuresAmongTheOutcomes() throws Exception {
    ClosedLoop.Batch b = ClosedLoop.run(2, 4, Duration.ofSeconds(10), i -> {
      if (i % 2 == 0) throw new UncheckedIOException(new HttpTimeoutException("slow"));
      return new Timed("CREATED", 1);
    });
    assertEquals(Map.of("CLIENT_TIMEOUT", 2L, "CREATED", 2L), Stats.outcomes(b.results()));
  }

  @Test
  void successesAreTheScenariosOperations() {
    assertEquals(7, result("b1", Map.of("CREATED", 7L, "CLIENT_TIMEOUT", 3L), Map.of()).successes());
    assertEquals(5, result("b1-sold-out", Map.of("SOLD_OUT", 5L), Map.of()).successes());
    assertEquals(12, result("b2", Map.of("PAID", 10L, "PAY_CLIENT_TIMEOUT", 2L), Map.of("paid", 12.0)).successes());
    assertEquals(40, result("b3", Map.of("HTTP_200", 40L, "CLIENT_TIMEOUT", 1L), Map.of()).successes());
    assertEquals(0, result("b1", Map.of("CLIENT_TIMEOUT", 3L), Map.of()).successes());
    assertEquals("PAID order", ScenarioResult.operation("b2"));
  }

  @Test
  void anAbortedScenarioRoundTripsAsAResultThatSaysSo() {
    ScenarioResult r = ScenarioResult.aborted("b2", 1, 16, "CLIENT_TIMEOUT", "creating SKU: timed out");
    ScenarioResult back = ScenarioResult.parse(r.toLine()).orElseThrow();
    assertEquals(Map.of("CLIENT_TIMEOUT", 1L), back.outcomes());
    assertTrue(Double.isNaN(back.rate()));
    assertEquals(List.of("aborted: creating SKU: timed out"), back.broken());
    assertEquals(0, back.successes());
  }

  private static ScenarioResult result(String scenario, Map<String, Long> outcomes, Map<String, Double> metrics) {
    return new ScenarioResult(scenario, 1, 4, 10, 1, 1, "x/s", 1, 2, outcomes, metrics, List.of(), "", List.of());
  }
}
