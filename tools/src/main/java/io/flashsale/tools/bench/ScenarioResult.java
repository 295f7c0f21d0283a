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

  /**
   * What one successful operation of the scenario is, for CPU per operation: a created order (b1,
   * jdbc), a sold-out answer, a pgbench transaction, a PAID order (b2), an accepted callback (b3).
   */
  public static String operation(String scenario) {
    return switch (scenario) {
      case "b1", "jdbc" -> "created order";
      case "engine" -> "order-shaped workflow";
      case "b1-sold-out" -> "sold-out answer";
      case "pgbench" -> "transaction";
      case "b2" -> "PAID order";
      case "b3" -> "accepted callback";
      case "b4" -> "buyer answered";
      default -> "operation";
    };
  }

  /** How many successful operations (see {@link #operation}) the run had. */
  public long successes() {
    return switch (scenario) {
      case "b1", "jdbc", "engine" -> outcomes.getOrDefault("CREATED", 0L);
      case "b1-sold-out" -> outcomes.getOrDefault("SOLD_OUT", 0L);
      case "pgbench" -> Math.max(0, requests);
      case "b2" -> Math.round(metrics.getOrDefault("paid", 0.0));
      case "b3" -> outcomes.getOrDefault("HTTP_200", 0L);
      case "b4" -> Math.max(0, requests);
      default -> 0;
    };
  }

  /** A scenario that could not run at all (its setup got no answer, say): what failed, counted. */
  public static ScenarioResult aborted(String scenario, int run, int clients, String outcome, String why) {
    return new ScenarioResult(scenario, run, clients, 0, 0, Double.NaN, "aborted", Double.NaN, Double.NaN,
        Map.of(outcome, 1L), Map.of(), List.of("aborted: " + why), "", List.of());
  }

  public double metric(String name) {
    return metrics.getOrDefault(name, Double.NaN);
  }

  public boolean ok() {
    return broken.isEmpty();
  }
}
