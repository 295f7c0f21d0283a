package io.flashsale.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bench's report: every line printed and kept for the file the bench writes, and the "!!"
 * lines of a broken invariant, any of which makes the bench exit 1.
 */
final class BenchReport {
  private final StringBuilder text = new StringBuilder();
  private final PrintStream out;
  private boolean broken;

  BenchReport(PrintStream out) {
    this.out = out;
  }

  /** Printed and kept. */
  void line(String s) {
    text.append(s).append('\n');
    out.println(s);
  }

  /** A broken invariant: printed with "!!", kept, and the bench fails. */
  void flag(String what) {
    broken = true;
    line("  !! " + what);
  }

  boolean broken() {
    return broken;
  }

  /** Where lines that are printed but not kept go (the warm-up's, the settling). */
  PrintStream out() {
    return out;
  }

  /** What was kept so far. */
  String text() {
    return text.toString();
  }

  /** Keeps {@code kept} instead of what was kept so far (the warm-up pass is left out of the report). */
  void replaceWith(String kept) {
    text.setLength(0);
    text.append(kept);
  }

  /** Writes {@code content} to {@code dir/name} and says where. */
  void write(Path dir, String name, String content) throws IOException {
    Files.createDirectories(dir);
    Path f = dir.resolve(name);
    Files.writeString(f, content);
    out.println("\nwritten to " + f);
  }

  /** A figure nobody measured (NaN) is left out: the median is over the runs that had it. */
  static void put(Map<String, List<Double>> m, String k, double v) {
    if (Double.isNaN(v)) return;
    m.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
  }

  /** Both measured, and a ratio of them means something. */
  static boolean ratio(double a, double b) {
    return !Double.isNaN(a) && !Double.isNaN(b) && b > 0;
  }
}
