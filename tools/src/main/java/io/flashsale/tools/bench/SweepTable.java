package io.flashsale.tools.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The sweep as a markdown table, and the series a plot of it draws. */
public final class SweepTable {
  private SweepTable() {}

  public static String markdown(List<SweepPoint> points) {
    StringBuilder sb = new StringBuilder();
    sb.append("| scenario | clients | stock | requests | throughput/s | sold-out/s | p50 ms | p99 ms | JDBC ceiling/s | service/JDBC |\n");
    sb.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (SweepPoint p : points) {
      sb.append(String.format("| %s | %d | %d | %d | %s | %s | %s | %s | %s | %s |%n", p.scenario(), p.clients(),
          p.stock(), p.requests(), num(p.throughputPerSecond()), num(p.soldOutPerSecond()), num(p.p50Ms()),
          num(p.p99Ms()), num(p.jdbcThroughputPerSecond()),
          ratio(p.throughputPerSecond(), p.jdbcThroughputPerSecond())));
    }
    return sb.toString();
  }

  /**
   * (clients, value) series for the plot, keyed "<scenario> stock=<n> <what>", plus the JDBC
   * ceiling once: throughput series and p99 series, each sorted by clients.
   */
  public static Map<String, List<double[]>> series(List<SweepPoint> points, boolean p99) {
    Map<String, List<double[]>> s = new LinkedHashMap<>();
    Map<Integer, Double> ceiling = new java.util.TreeMap<>();
    for (SweepPoint p : points) {
      String name = p.scenario() + " stock=" + p.stock() + (p99 ? " p99 ms" : " /s");
      s.computeIfAbsent(name, k -> new ArrayList<>()).add(new double[] {p.clients(), p99 ? p.p99Ms() : p.throughputPerSecond()});
      if (!Double.isNaN(p.jdbcThroughputPerSecond())) ceiling.put(p.clients(), p.jdbcThroughputPerSecond());
    }
    if (!p99 && !ceiling.isEmpty()) {
      List<double[]> c = new ArrayList<>();
      ceiling.forEach((k, v) -> c.add(new double[] {k, v}));
      s.put("JDBC ceiling /s", c);
    }
    s.values().forEach(l -> l.sort((a, b) -> Double.compare(a[0], b[0])));
    return s;
  }

  static String num(double v) {
    return Double.isNaN(v) ? "–" : String.format(v >= 100 ? "%.0f" : "%.1f", v);
  }

  static String ratio(double service, double jdbc) {
    return Double.isNaN(service) || Double.isNaN(jdbc) || jdbc == 0 ? "–" : String.format("%.3f", service / jdbc);
  }
}
