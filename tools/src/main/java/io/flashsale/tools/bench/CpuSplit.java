package io.flashsale.tools.bench;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Who used the machine during a scenario: the client (the load JVM) and the service, split into
 * its parts — the service JVM, the Temporal dev server (or server), the Temporal server's own
 * PostgreSQL on the production shape's engine, PostgreSQL (postmaster and backends), and anything
 * else the service started — in CPU-seconds, as shares of cores × wall time, and per
 * successful operation.
 *
 * @param serviceParts CPU-seconds of each part of the service that was there, in the order of {@link #PARTS}
 */
public record CpuSplit(double wallSeconds, double clientSeconds, Map<String, Double> serviceParts, int cores) {
  public static final String JVM = "jvm";
  public static final String TEMPORAL = "temporal";
  /** The Temporal server's own PostgreSQL (the production shape's engine), apart from the orders' database. */
  public static final String TEMPORAL_POSTGRES = "temporal-postgres";
  public static final String POSTGRES = "postgres";
  public static final String OTHER = "other";
  /** The parts of the service, in the order the report prints them. */
  public static final java.util.List<String> PARTS = java.util.List.of(JVM, TEMPORAL, TEMPORAL_POSTGRES, POSTGRES, OTHER);
  public static final String CLIENT = "client";

  /**
   * CPU counters at one instant, all in nanoseconds.
   *
   * @param parts the service's CPU by part; a part without a process (the in-memory engine has no
   *     Temporal process) is absent
   */
  public record Sample(long wallNanos, Map<String, Long> parts, long clientNanos) {
    /** A sample of a service that is one process (the service JVM). */
    public Sample(long wallNanos, long serviceNanos, long clientNanos) {
      this(wallNanos, Map.of(JVM, serviceNanos), clientNanos);
    }

    public long serviceNanos() {
      return parts.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /** The parts are kept in the report's order ({@link #PARTS}), whatever order they came in. */
  public CpuSplit {
    Map<String, Double> ordered = new LinkedHashMap<>();
    for (String p : PARTS) if (serviceParts.containsKey(p)) ordered.put(p, serviceParts.get(p));
    serviceParts.forEach(ordered::putIfAbsent);
    serviceParts = java.util.Collections.unmodifiableMap(ordered);
  }

  /** The deltas of each counter; a part present at either end counts (0 where it was absent). */
  public static CpuSplit between(Sample start, Sample end, int cores) {
    Map<String, Double> parts = new LinkedHashMap<>();
    for (String p : PARTS) {
      if (!start.parts().containsKey(p) && !end.parts().containsKey(p)) continue;
      parts.put(p, (end.parts().getOrDefault(p, 0L) - start.parts().getOrDefault(p, 0L)) / 1e9);
    }
    return new CpuSplit((end.wallNanos() - start.wallNanos()) / 1e9, (end.clientNanos() - start.clientNanos()) / 1e9,
        parts, cores);
  }

  /** The service's CPU-seconds: the sum of its parts. */
  public double serviceSeconds() {
    return serviceParts.values().stream().mapToDouble(Double::doubleValue).sum();
  }

  /** The client's part of the machine's capacity over the window (1.0 = every core all the time). */
  public double clientShare() {
    return share(clientSeconds);
  }

  public double serviceShare() {
    return share(serviceSeconds());
  }

  /** What neither used: idle, or other programs on the machine. */
  public double idleShare() {
    return 1 - clientShare() - serviceShare();
  }

  public double share(double cpuSeconds) {
    return wallSeconds <= 0 ? Double.NaN : cpuSeconds / (cores * wallSeconds);
  }

  /**
   * CPU-milliseconds per successful operation of each service part, then of the client; empty when
   * there was no success (nothing to divide by).
   */
  public Map<String, Double> msPerOperation(long successes) {
    Map<String, Double> m = new LinkedHashMap<>();
    if (successes <= 0) return m;
    serviceParts.forEach((p, s) -> m.put(p, 1000 * s / successes));
    m.put(CLIENT, 1000 * clientSeconds / successes);
    return m;
  }

  /** "cpu over 10.0 s on 2 cores: client 4.0 s (20%), service 12.0 s (60%) = jvm 7.0 s (35%) + ..., rest 20%". */
  public String line() {
    StringJoiner parts = new StringJoiner(" + ");
    serviceParts.forEach((p, s) -> parts.add(String.format("%s %.1f s (%.0f%%)", p, s, 100 * share(s))));
    return String.format("cpu over %.1f s on %d cores: client %.1f s (%.0f%%), service %.1f s (%.0f%%) = %s, rest %.0f%%",
        wallSeconds, cores, clientSeconds, 100 * clientShare(), serviceSeconds(), 100 * serviceShare(), parts,
        100 * idleShare());
  }

  /** "per created order: jvm 30 ms, temporal 22 ms, postgres 7 ms, client 3 ms", or why there is none. */
  public String perOperationLine(String operation, long successes) {
    return perOperationLine(operation, msPerOperation(successes));
  }

  /** The same line from CPU-milliseconds per operation by part (e.g. medians over runs). */
  public static String perOperationLine(String operation, Map<String, Double> msPerOperation) {
    if (msPerOperation.isEmpty()) return "no " + operation + ": no CPU per " + operation;
    StringJoiner j = new StringJoiner(", ", "cpu per " + operation + ": ", "");
    msPerOperation.forEach((p, ms) -> j.add(p + " " + ms(ms) + " ms"));
    return j.toString();
  }

  /** Milliseconds with the digits that matter: 30, 7.4, 0.62. */
  static String ms(double v) {
    if (Double.isNaN(v)) return "-";
    if (Math.abs(v) >= 10) return String.format("%.0f", v);
    if (Math.abs(v) >= 1) return String.format("%.1f", v);
    return String.format("%.2f", v);
  }
}
