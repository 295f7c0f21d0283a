package io.flashsale.tools.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One run of one load scenario, as the load JVM prints it (one {@code RESULT {json}} line) and
 * the bench reads it back.
 *
 * @param rate the scenario's headline throughput, in {@code rateUnit} (e.g. created/s)
 * @param p50Ms p50 of the headline latency (NaN when no request got that outcome)
 * @param outcomes every answer counted by outcome (CREATED, SOLD_OUT, HTTP_503, ERROR_...)
 * @param metrics further figures by name (sold_out/s, applied notices/s, ...)
 * @param broken the invariants this run broke, empty when all held
 * @param reconcile the reconcile task's verdict after the run ("clean" or the findings)
 */
public record ScenarioResult(String scenario, int run, int clients, long requests, double seconds, double rate,
    String rateUnit, double p50Ms, double p99Ms, Map<String, Long> outcomes, Map<String, Double> metrics,
    List<String> broken, String reconcile, List<String> notes) {

  public static final String PREFIX = "RESULT ";

  private static final ObjectMapper JSON = new ObjectMapper()
      .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  public String toLine() {
    try {
      return PREFIX + JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The result a line carries, or empty when it is no RESULT line (the load JVM's human output). */
  public static Optional<ScenarioResult> parse(String line) {
    if (line == null || !line.startsWith(PREFIX)) return Optional.empty();
    try {
      return Optional.of(JSON.readValue(line.substring(PREFIX.length()), ScenarioResult.class));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("unreadable RESULT line: " + line, e);
    }
  }

  public double metric(String name) {
    return metrics.getOrDefault(name, Double.NaN);
  }

  public boolean ok() {
    return broken.isEmpty();
  }
}
