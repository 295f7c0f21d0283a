package io.flashsale.tools.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a workflow task's time goes, from two scrapes of the service's SDK metrics (the admin
 * port's Prometheus text): how long tasks waited for a poller (schedule-to-start), ran in the
 * worker (execution, of which the local database steps) and took to complete (the
 * RespondWorkflowTaskCompleted call). The difference of the histograms between the scrapes is
 * the window's; a percentile is the upper bound of the bucket it falls in.
 */
public final class TaskLatencies {
  public static final String QUEUED = "queued for a poller";

  /** The SDK labels a task taken from a worker's sticky queue with this suffix on the task queue's name. */
  static final String STICKY_SUFFIX = ":sticky";

  /** One SDK timer and which of its series count. */
  record Spec(String metric, Predicate<Map<String, String>> series) {
    static Spec all(String metric) {
      return new Spec(metric, labels -> true);
    }
  }

  /** The SDK timers this reads, by the name the report gives them, in the report's order. */
  static final Map<String, Spec> TIMERS;

  static {
    Map<String, Spec> t = new LinkedHashMap<>();
    t.put(QUEUED, Spec.all("temporal_workflow_task_schedule_to_start_latency_seconds"));
    t.put("of them on the task queue", new Spec("temporal_workflow_task_schedule_to_start_latency_seconds",
        labels -> !labels.getOrDefault("task_queue", "").endsWith(STICKY_SUFFIX)));
    t.put("on the sticky queue", new Spec("temporal_workflow_task_schedule_to_start_latency_seconds",
        labels -> labels.getOrDefault("task_queue", "").endsWith(STICKY_SUFFIX)));
    t.put("executing", Spec.all("temporal_workflow_task_execution_latency_seconds"));
    t.put("of which local steps", Spec.all("temporal_local_activity_execution_latency_seconds"));
    t.put("completing", new Spec("temporal_request_latency_seconds",
        labels -> "RespondWorkflowTaskCompleted".equals(labels.get("operation"))));
    t.put("activity tasks queued", Spec.all("temporal_activity_schedule_to_start_latency_seconds"));
    TIMERS = Collections.unmodifiableMap(t);
  }

  /** Only these lines can belong to a timer of {@link #TIMERS}: the rest are not parsed. */
  private static final String SDK_PREFIX = "temporal_";

  /** One timer over the window: how many, their mean and 99th percentile in ms. */
  public record Timer(long count, double meanMs, double p99Ms) {}

  /** A scrape reduced to what this reads: per timer, its count, sum and cumulative buckets. */
  public record Scrape(Map<String, Histogram> timers) {}

  record Histogram(double count, double sum, TreeMap<Double, Double> cumulative) {}

  private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");

  private TaskLatencies() {}

  /** Reads the timers of {@link #TIMERS} from Prometheus text; series of one timer are added up. */
  public static Scrape parse(String prometheusText) {
    Map<String, double[]> totals = new HashMap<>();
    Map<String, TreeMap<Double, Double>> buckets = new HashMap<>();
    for (String line : prometheusText.split("\\R")) {
      if (!line.startsWith(SDK_PREFIX)) continue; // comments and other meters
      Matcher m = LINE.matcher(line.strip());
      if (!m.matches()) continue;
      String name = m.group(1);
      Map<String, String> labels = labels(m.group(3));
      double value = number(m.group(4));
      for (Map.Entry<String, Spec> t : TIMERS.entrySet()) {
        String base = t.getValue().metric();
        if (!t.getValue().series().test(labels)) continue;
        if (name.equals(base + "_count")) totals.computeIfAbsent(t.getKey(), k -> new double[2])[0] += value;
        else if (name.equals(base + "_sum")) totals.computeIfAbsent(t.getKey(), k -> new double[2])[1] += value;
        else if (name.equals(base + "_bucket") && labels.containsKey("le")) {
          double le = number(labels.get("le"));
          buckets.computeIfAbsent(t.getKey(), k -> new TreeMap<>()).merge(le, value, Double::sum);
        }
      }
    }
    Map<String, Histogram> timers = new HashMap<>();
    for (String key : TIMERS.keySet()) {
      double[] cs = totals.getOrDefault(key, new double[2]);
      timers.put(key, new Histogram(cs[0], cs[1], buckets.getOrDefault(key, new TreeMap<>())));
    }
    return new Scrape(timers);
  }

  /** Each timer over the window between two scrapes; absent when nothing was timed in it. */
  public static Map<String, Timer> between(Scrape before, Scrape after) {
    Map<String, Timer> out = new LinkedHashMap<>();
    for (String key : TIMERS.keySet()) {
      Histogram a = before.timers().get(key);
      Histogram b = after.timers().get(key);
      long n = Math.round(b.count() - a.count());
      if (n <= 0) continue;
      double mean = 1000 * (b.sum() - a.sum()) / n;
      out.put(key, new Timer(n, mean, 1000 * percentile(a.cumulative(), b.cumulative(), n, 0.99)));
    }
    return out;
  }

  /** The upper bound of the bucket that holds the q-th of the n observations between the scrapes. */
  static double percentile(TreeMap<Double, Double> before, TreeMap<Double, Double> after, long n, double q) {
    double rank = Math.ceil(q * n);
    for (Map.Entry<Double, Double> e : after.entrySet()) {
      double inWindow = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
      if (inWindow >= rank) return e.getKey();
    }
    return Double.NaN;
  }

  /** One line: each timer's mean / p99 in ms and its count. */
  public static String describe(Map<String, Timer> timers) {
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, Timer> e : timers.entrySet()) {
      Timer t = e.getValue();
      parts.add(String.format(Locale.ROOT, "%s %.1f / %s (%d)", e.getKey(), t.meanMs(),
          Double.isInfinite(t.p99Ms()) ? "beyond the last bucket" : String.format(Locale.ROOT, "%.0f ms", t.p99Ms()),
          t.count()));
    }
    return parts.isEmpty() ? "no workflow task timed" : String.join(", ", parts);
  }

  private static Map<String, String> labels(String text) {
    Map<String, String> labels = new HashMap<>();
    if (text == null) return labels;
    Matcher m = LABEL.matcher(text);
    while (m.find()) labels.put(m.group(1), m.group(2));
    return labels;
  }

  /** A sample value or bucket bound as the text format writes it, infinities and NaN included. */
  static double number(String text) {
    return switch (text) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      case "NaN" -> Double.NaN;
      default -> Double.parseDouble(text);
    };
  }
}
