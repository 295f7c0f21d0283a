package io.flashsale.tools.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Two bench reports of the same command on two engines, side by side: each scenario's median rate,
 * p99 and CPU per operation by process, read from the reports' "medians over" lines (so a report
 * written by another JVM compares as this one's does).
 */
public final class EngineComparison {
  /** One scenario's medians: rate and its unit, p99, CPU-ms per operation by part (jvm, temporal, ...). */
  public record Row(double rate, String unit, double p99Ms, Map<String, Double> cpuMsPerOperation) {}

  private static final Pattern MEDIAN = Pattern.compile(
      "^  (\\S+(?: \\S+)*?)\\s+([0-9.]+) (.+?), p50 [0-9.]+ ms, p99 ([0-9.]+) ms(?:; cpu per [^:]+: (.*))?$");
  private static final Pattern PART = Pattern.compile("^(\\S+) ([0-9.]+) ms$");

  private EngineComparison() {}

  /** The scenario lines under the report's last "medians over" heading. */
  public static Map<String, Row> medians(String report) {
    Map<String, Row> rows = new LinkedHashMap<>();
    String heading = "medians over ";
    int at = report.lastIndexOf("\n" + heading);
    at = at >= 0 ? at + 1 : report.startsWith(heading) ? 0 : -1;
    if (at < 0) return rows;
    for (String line : report.substring(at).split("\n")) {
      Matcher m = MEDIAN.matcher(line);
      if (!m.matches()) continue;
      Map<String, Double> cpu = new LinkedHashMap<>();
      if (m.group(5) != null) {
        for (String part : m.group(5).split(", ")) {
          Matcher p = PART.matcher(part.trim());
          if (p.matches()) cpu.put(p.group(1), Double.parseDouble(p.group(2)));
        }
      }
      rows.put(m.group(1), new Row(Double.parseDouble(m.group(2)), m.group(3), Double.parseDouble(m.group(4)), cpu));
    }
    return rows;
  }

  /** A table of every scenario both reports have, each engine a line, CPU-ms per operation by part. */
  public static List<String> table(String leftName, Map<String, Row> left, String rightName, Map<String, Row> right) {
    Set<String> parts = new LinkedHashSet<>();
    for (String p : CpuSplit.PARTS) {
      if (hasPart(left, p) || hasPart(right, p)) parts.add(p);
    }
    parts.add(CpuSplit.CLIENT);
    int nameWidth = Math.max(leftName.length(), rightName.length());
    List<String> out = new ArrayList<>();
    StringBuilder head = new StringBuilder(String.format("  %-12s %-" + nameWidth + "s %22s %10s  cpu ms per operation:",
        "scenario", "engine", "median rate", "p99 ms"));
    for (String p : parts) head.append(String.format(" %" + width(p) + "s", p));
    head.append(String.format(" %8s", "all"));
    out.add(head.toString());
    for (String scenario : left.keySet()) {
      if (!right.containsKey(scenario)) continue;
      out.add(row(scenario, leftName, nameWidth, left.get(scenario), parts));
      out.add(row("", rightName, nameWidth, right.get(scenario), parts));
    }
    return out;
  }

  /** A part's column: as wide as its name, at least 8. */
  private static int width(String part) {
    return Math.max(8, part.length());
  }

  private static boolean hasPart(Map<String, Row> rows, String part) {
    return rows.values().stream().anyMatch(r -> r.cpuMsPerOperation().containsKey(part));
  }

  private static String row(String scenario, String engine, int nameWidth, Row r, Set<String> parts) {
    StringBuilder sb = new StringBuilder(String.format("  %-12s %-" + nameWidth + "s %22s %10.1f  %21s", scenario, engine,
        String.format("%.1f %s", r.rate(), r.unit()), r.p99Ms(), ""));
    double all = 0;
    for (String p : parts) {
      Double ms = r.cpuMsPerOperation().get(p);
      if (ms != null) all += ms;
      sb.append(String.format(" %" + width(p) + "s", ms == null ? "-" : CpuSplit.ms(ms)));
    }
    sb.append(String.format(" %8s", r.cpuMsPerOperation().isEmpty() ? "-" : CpuSplit.ms(all)));
    return sb.toString();
  }
}
