package io.flashsale.tools.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The arithmetic of the report: latencies of one outcome, nearest-rank percentiles, medians over runs. */
public final class Stats {
  private Stats() {}

  /** The latencies (ns) of the results with this outcome, sorted. */
  public static List<Long> latencies(List<Timed> results, String outcome) {
    List<Long> l = new ArrayList<>();
    for (Timed t : results) if (outcome.equals(t.outcome())) l.add(t.nanos());
    Collections.sort(l);
    return l;
  }

  /** How many results had each outcome, in order of first appearance. */
  public static Map<String, Long> outcomes(List<Timed> results) {
    Map<String, Long> m = new LinkedHashMap<>();
    for (Timed t : results) m.merge(String.valueOf(t.outcome()), 1L, Long::sum);
    return m;
  }

  /** Nearest-rank percentile p of sorted latencies, in ms; NaN when there are none (never a fake 0). */
  public static double pct(List<Long> sorted, int p) {
    if (sorted.isEmpty()) return Double.NaN;
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i))) / 1e6;
  }

  /** The median; NaN values (a run where nobody got that outcome) are left out; NaN when none is left. */
  public static double median(List<Double> v) {
    List<Double> s = new ArrayList<>();
    for (Double d : v) if (d != null && !d.isNaN()) s.add(d);
    if (s.isEmpty()) return Double.NaN;
    Collections.sort(s);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  /** One line of the summary: the metric and the median of its runs, in fixed columns (ratios with 3 decimals). */
  public static String medianLine(String metric, List<Double> runs) {
    return String.format(metric.startsWith("ratio") ? "  %-34s %10.3f" : "  %-34s %10.1f", metric, median(runs));
  }

  /**
   * The median of each key over maps (e.g. CPU-ms per operation by part, one map per run), keys in
   * first-seen order; a key a map lacks is left out of that key's median.
   */
  public static Map<String, Double> medianByKey(List<Map<String, Double>> maps) {
    Map<String, List<Double>> byKey = new LinkedHashMap<>();
    for (Map<String, Double> m : maps) m.forEach((k, v) -> byKey.computeIfAbsent(k, x -> new ArrayList<>()).add(v));
    Map<String, Double> out = new LinkedHashMap<>();
    byKey.forEach((k, v) -> {
      double med = median(v);
      if (!Double.isNaN(med)) out.put(k, med);
    });
    return out;
  }
}
