package io.flashsale.tools.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jdk.jfr.consumer.RecordedClass;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * A short text summary of a JFR recording, for reading next to benchmark results: where the CPU
 * went (methods by self and by total samples, areas of the code base, threads), how much was
 * allocated and by whom, what GC cost, and which monitors and parks threads waited on.
 *
 * <p>Sections whose events the recording lacks say so instead of failing, so any recording will do;
 * {@code -XX:StartFlightRecording:settings=profile} gives all of them. Monitor and park events are
 * only those over the recording's threshold (20 ms in both stock settings).
 *
 * <p>Areas: each CPU sample goes to the area of its first frame from the top that is not JDK code
 * ({@code java.}, {@code javax.}, {@code jdk.}, {@code sun.}, {@code com.sun.}), so time in
 * {@code HashMap.get} called by the service counts as service time; a sample made of JDK frames
 * only goes to the JDK's area. A class's area is that of the first prefix it starts with, in the
 * caller's map order; classes no prefix matches go to {@value #OTHER_AREA}.
 */
public final class JfrSummary {

  /** How many rows each top list shows unless told otherwise. */
  public static final int DEFAULT_TOP_N = 15;

  /** Where a class matches none of the caller's prefixes. */
  public static final String OTHER_AREA = "other";

  /** The areas of a flashsale recording, by package prefix; first match wins. */
  public static final Map<String, String> FLASHSALE_AREAS = Collections.unmodifiableMap(areas(
      "io.flashsale.", "service",
      "io.temporal.", "Temporal SDK",
      "io.grpc.", "gRPC",
      "io.netty.", "gRPC",
      "org.postgresql.", "JDBC",
      "com.zaxxer.", "JDBC",
      "org.eclipse.jetty.", "HTTP",
      "org.glassfish.jersey.", "HTTP",
      "com.fasterxml.", "JSON",
      "java.", "JDK",
      "javax.", "JDK",
      "jdk.", "JDK",
      "sun.", "JDK",
      "com.sun.", "JDK"));

  private static final List<String> JDK_PREFIXES = List.of("java.", "javax.", "jdk.", "sun.", "com.sun.");
  private static final String JDK_AREA = "JDK";

  /** {@link #summarise(Path, int, Map)} with {@link #DEFAULT_TOP_N} rows and {@link #FLASHSALE_AREAS}. */
  public static String summarise(Path jfr) throws IOException {
    return summarise(jfr, DEFAULT_TOP_N, FLASHSALE_AREAS);
  }

  /**
   * Reads the recording once and returns the summary text.
   *
   * @param topN rows in each top list
   * @param areaByPrefix area name by class-name prefix, in matching order (pass an ordered map)
   */
  public static String summarise(Path jfr, int topN, Map<String, String> areaByPrefix) throws IOException {
    if (topN < 1) throw new IllegalArgumentException("topN must be positive, got " + topN);
    Tally tally = new Tally(areaByPrefix);
    try (RecordingFile recording = new RecordingFile(jfr)) {
      while (recording.hasMoreEvents()) tally.add(recording.readEvent());
    }
    return tally.report(jfr, topN);
  }

  /**
   * The area of one stack, given its frames' class names from the top: that of the first non-JDK
   * frame, else of the top frame (JDK code only), else {@value #JDK_AREA} for an empty stack.
   */
  static String areaOf(List<String> classesFromTop, Map<String, String> areaByPrefix) {
    for (String c : classesFromTop) {
      if (!isJdk(c)) return areaOfClass(c, areaByPrefix);
    }
    if (classesFromTop.isEmpty()) return JDK_AREA;
    String area = areaOfClass(classesFromTop.get(0), areaByPrefix);
    return area.equals(OTHER_AREA) ? JDK_AREA : area;
  }

  private static String areaOfClass(String className, Map<String, String> areaByPrefix) {
    for (Map.Entry<String, String> e : areaByPrefix.entrySet()) {
      if (className.startsWith(e.getKey())) return e.getValue();
    }
    return OTHER_AREA;
  }

  private static boolean isJdk(String className) {
    for (String p : JDK_PREFIXES) {
      if (className.startsWith(p)) return true;
    }
    return false;
  }

  // ---- one pass over the events

  private static final class Tally {
    private final Map<String, String> areaByPrefix;
    private Instant first;
    private Instant last;

    private long cpuSamples;
    private long truncatedStacks;
    private long nativeSamples;
    private final Map<String, Long> selfSamples = new HashMap<>();
    private final Map<String, Long> totalSamples = new HashMap<>();
    private final Map<String, Long> areaSamples = new HashMap<>();
    private final Map<String, Long> threadSamples = new HashMap<>();

    private long cpuLoadEvents;
    private double jvmCpuSum;
    private double machineCpuSum;

    private long allocationEvents;
    private long allocatedBytes;
    private final Map<String, Long> bytesByMethod = new HashMap<>();
    private final Map<String, Long> bytesBySite = new HashMap<>();
    private final Map<String, Long> bytesByClass = new HashMap<>();

    private long collections;
    private Duration gcTime = Duration.ZERO;
    private Duration gcPauses = Duration.ZERO;
    private Duration longestPause = Duration.ZERO;
    private final Map<String, Long> collectionsByCollector = new HashMap<>();
    private final Map<String, Duration> timeByCollector = new HashMap<>();

    private final Waits monitorWaits = new Waits();
    private final Waits parks = new Waits();

    Tally(Map<String, String> areaByPrefix) {
      this.areaByPrefix = areaByPrefix;
    }

    void add(RecordedEvent e) {
      widenSpan(e);
      switch (e.getEventType().getName()) {
        case "jdk.ExecutionSample" -> addCpuSample(e);
        case "jdk.NativeMethodSample" -> nativeSamples++;
        case "jdk.CPULoad" -> addCpuLoad(e);
        case "jdk.ObjectAllocationSample" -> addAllocation(e);
        case "jdk.GarbageCollection" -> addCollection(e);
        case "jdk.JavaMonitorEnter" -> monitorWaits.add(className(e, "monitorClass"), site(e.getStackTrace()), e.getDuration());
        case "jdk.ThreadPark" -> parks.add(className(e, "parkedClass"), site(e.getStackTrace()), e.getDuration());
        default -> { }
      }
    }

    private void widenSpan(RecordedEvent e) {
      if (first == null || e.getStartTime().isBefore(first)) first = e.getStartTime();
      if (last == null || e.getEndTime().isAfter(last)) last = e.getEndTime();
    }

    private void addCpuSample(RecordedEvent e) {
      cpuSamples++;
      if (e.hasField("sampledThread")) increment(threadSamples, threadPattern(e.getThread("sampledThread")), 1);
      RecordedStackTrace stack = e.getStackTrace();
      if (stack == null || stack.getFrames().isEmpty()) {
        increment(areaSamples, "(no stack)", 1);
        return;
      }
      if (stack.isTruncated()) truncatedStacks++;
      List<RecordedFrame> frames = stack.getFrames(); // index 0 is the top, the method running
      increment(selfSamples, methodName(frames.get(0)), 1);
      // Inclusive time counts a method once per sample, however deep its recursion.
      Set<String> onStack = new HashSet<>();
      for (RecordedFrame f : frames) onStack.add(methodName(f));
      for (String m : onStack) increment(totalSamples, m, 1);
      increment(areaSamples, areaOf(frames.stream().map(Tally::frameClass).toList(), areaByPrefix), 1);
    }

    private void addCpuLoad(RecordedEvent e) {
      if (!e.hasField("jvmUser") || !e.hasField("jvmSystem") || !e.hasField("machineTotal")) return;
      cpuLoadEvents++;
      jvmCpuSum += e.getFloat("jvmUser") + e.getFloat("jvmSystem");
      machineCpuSum += e.getFloat("machineTotal");
    }

    private void addAllocation(RecordedEvent e) {
      if (!e.hasField("weight")) return;
      long weight = e.getLong("weight");
      allocationEvents++;
      allocatedBytes += weight;
      increment(bytesByClass, className(e, "objectClass"), weight);
      RecordedStackTrace stack = e.getStackTrace();
      boolean hasTop = stack != null && !stack.getFrames().isEmpty();
      increment(bytesByMethod, hasTop ? methodName(stack.getFrames().get(0)) : "(no stack)", weight);
      increment(bytesBySite, site(stack), weight);
    }

    private void addCollection(RecordedEvent e) {
      collections++;
      gcTime = gcTime.plus(e.getDuration());
      // sumOfPauses is the stop-the-world part; a concurrent collector's duration is longer.
      Duration pauses = e.hasField("sumOfPauses") ? e.getDuration("sumOfPauses") : e.getDuration();
      gcPauses = gcPauses.plus(pauses);
      Duration longest = e.hasField("longestPause") ? e.getDuration("longestPause") : pauses;
      if (longest.compareTo(longestPause) > 0) longestPause = longest;
      String collector = e.hasField("name") ? String.valueOf(e.getString("name")) : "?";
      increment(collectionsByCollector, collector, 1);
      timeByCollector.merge(collector, e.getDuration(), Duration::plus);
    }

    // ---- the text

    String report(Path jfr, int topN) {
      Text t = new Text();
      t.line("JFR summary of %s", jfr.getFileName());
      if (first == null) {
        t.line("the recording holds no events");
      } else {
        Duration span = Duration.between(first, last);
        t.line("span: %s (%s .. %s)", seconds(span), first, last);
      }
      t.line("CPU samples: %d jdk.ExecutionSample%s, %d jdk.NativeMethodSample (threads in native code)",
          cpuSamples, truncatedStacks == 0 ? "" : String.format(Locale.ROOT,
              " (%d with a stack truncated at the recording's depth: total counts are lower bounds)", truncatedStacks),
          nativeSamples);
      if (cpuLoadEvents > 0) {
        t.line("CPU load (jdk.CPULoad, mean of %d): JVM %.0f%%, whole machine %.0f%%",
            cpuLoadEvents, 100 * jvmCpuSum / cpuLoadEvents, 100 * machineCpuSum / cpuLoadEvents);
      }

      t.section("Top %d methods by self samples (the running method)", topN);
      t.counts(selfSamples, cpuSamples, topN, "jdk.ExecutionSample", "method");
      t.section("Top %d methods by total samples (anywhere on the stack, once per sample)", topN);
      t.counts(totalSamples, cpuSamples, topN, "jdk.ExecutionSample", "method");
      t.section("Samples by area (first non-JDK frame from the top)");
      t.counts(areaSamples, cpuSamples, Integer.MAX_VALUE, "jdk.ExecutionSample", "area");
      t.section("Top %d threads by samples (digits in names as #)", topN);
      t.counts(threadSamples, cpuSamples, topN, "jdk.ExecutionSample", "thread");

      t.section("Allocation (jdk.ObjectAllocationSample, by sampled weight)");
      if (allocationEvents == 0) {
        t.absent("jdk.ObjectAllocationSample");
      } else {
        double perSecond = first == null ? 0 : allocatedBytes / Math.max(1e-3, Duration.between(first, last).toNanos() / 1e9);
        t.line("  %s in %d samples, %s/s over the span", bytes(allocatedBytes), allocationEvents, bytes((long) perSecond));
        t.line("  top %d allocating methods (top frame):", topN);
        t.weights(bytesByMethod, allocatedBytes, topN);
        t.line("  top %d allocating sites (first non-JDK frame):", topN);
        t.weights(bytesBySite, allocatedBytes, topN);
        t.line("  top %d allocated classes:", topN);
        t.weights(bytesByClass, allocatedBytes, topN);
      }

      t.section("GC (jdk.GarbageCollection)");
      if (collections == 0) {
        t.absent("jdk.GarbageCollection");
      } else {
        String share = first == null ? "" : String.format(Locale.ROOT, " (%.1f%% of the span)",
            100.0 * gcPauses.toNanos() / Math.max(1, Duration.between(first, last).toNanos()));
        t.line("  collections: %d, %s in total; pauses %s%s, longest %s",
            collections, millis(gcTime), millis(gcPauses), share, millis(longestPause));
        t.line("  %11s  %11s  %s", "collections", "time", "collector");
        top(collectionsByCollector, Integer.MAX_VALUE).forEach(c -> t.line("  %11d  %11s  %s",
            c.getValue(), millis(timeByCollector.get(c.getKey())), c.getKey()));
      }

      t.section("Lock contention (jdk.JavaMonitorEnter, by total blocked time)");
      t.waits(monitorWaits, topN, "jdk.JavaMonitorEnter", "monitor class");
      t.section("Thread park (jdk.ThreadPark, by total parked time)");
      t.waits(parks, topN, "jdk.ThreadPark", "parked on");
      return t.toString();
    }

    /** Where in the code base something happened: the first non-JDK frame from the top, else the top one. */
    private static String site(RecordedStackTrace stack) {
      if (stack == null || stack.getFrames().isEmpty()) return "(no stack)";
      for (RecordedFrame f : stack.getFrames()) {
        if (!isJdk(frameClass(f))) return methodName(f);
      }
      return methodName(stack.getFrames().get(0));
    }

    private static String methodName(RecordedFrame frame) {
      RecordedMethod m = frame.getMethod();
      return m == null ? "(unknown)" : frameClass(frame) + "." + m.getName();
    }

    private static String frameClass(RecordedFrame frame) {
      RecordedMethod m = frame.getMethod();
      RecordedClass type = m == null ? null : m.getType();
      return type == null ? "(unknown)" : withoutLambdaIds(type.getName());
    }

    private static String className(RecordedEvent e, String field) {
      RecordedClass c = e.hasField(field) ? e.getClass(field) : null;
      return c == null ? "(unknown)" : withoutLambdaIds(c.getName());
    }

    /** Per-thread names such as {@code dw-17 - POST /orders/42} pooled as {@code dw-# - POST /orders/#}. */
    private static String threadPattern(RecordedThread thread) {
      if (thread == null) return "(unknown)";
      String name = thread.getJavaName() != null ? thread.getJavaName() : thread.getOSName();
      return name == null ? "(unknown)" : DIGITS.matcher(name).replaceAll("#");
    }
  }

  private static final Pattern DIGITS = Pattern.compile("[0-9]+");
  // Lambda classes carry a per-run id (Foo$$Lambda$14/0x0000000800066840): one name for all of them.
  private static final Pattern LAMBDA_ID = Pattern.compile("\\$\\$Lambda[$0-9]*/0x[0-9a-fA-F]+");

  private static String withoutLambdaIds(String className) {
    return LAMBDA_ID.matcher(className).replaceAll(Matcher.quoteReplacement("$$Lambda"));
  }

  /** Count and total duration of waits, by what was waited on. */
  private static final class Waits {
    final Map<String, Long> countByObject = new HashMap<>();
    final Map<String, Duration> timeByObject = new HashMap<>();
    final Map<String, Long> countBySite = new HashMap<>();
    final Map<String, Duration> timeBySite = new HashMap<>();
    long events;

    void add(String on, String site, Duration waited) {
      events++;
      increment(countByObject, on, 1);
      timeByObject.merge(on, waited, Duration::plus);
      increment(countBySite, site, 1);
      timeBySite.merge(site, waited, Duration::plus);
    }
  }

  // ---- formatting

  private static final class Text {
    private final StringBuilder out = new StringBuilder();

    void line(String format, Object... args) {
      out.append(String.format(Locale.ROOT, format, args)).append('\n');
    }

    void section(String format, Object... args) {
      out.append('\n');
      line("== " + format + " ==", args);
    }

    void absent(String eventType) {
      line("  (no %s events in this recording)", eventType);
    }

    void counts(Map<String, Long> counts, long of, int topN, String eventType, String what) {
      if (counts.isEmpty()) {
        absent(eventType);
        return;
      }
      line("  %8s  %6s  %s", "samples", "share", what);
      top(counts, topN).forEach(e -> line("  %8d  %5.1f%%  %s", e.getValue(), 100.0 * e.getValue() / of, e.getKey()));
    }

    void weights(Map<String, Long> bytesBy, long of, int topN) {
      top(bytesBy, topN).forEach(e ->
          line("  %10s  %5.1f%%  %s", bytes(e.getValue()), 100.0 * e.getValue() / of, e.getKey()));
    }

    void waits(Waits waits, int topN, String eventType, String what) {
      if (waits.events == 0) {
        absent(eventType);
        return;
      }
      Duration total = waits.timeByObject.values().stream().reduce(Duration.ZERO, Duration::plus);
      line("  events: %d, %s in total", waits.events, millis(total));
      line("  %10s  %8s  %s", "time", "events", what);
      longest(waits.timeByObject, waits.countByObject, topN);
      line("  %10s  %8s  %s", "time", "events", "site (first non-JDK frame)");
      longest(waits.timeBySite, waits.countBySite, topN);
    }

    private void longest(Map<String, Duration> timeBy, Map<String, Long> countBy, int topN) {
      timeBy.entrySet().stream()
          .sorted(Map.Entry.<String, Duration>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
          .limit(topN)
          .forEach(e -> line("  %10s  %8d  %s", millis(e.getValue()), countBy.get(e.getKey()), e.getKey()));
    }

    @Override
    public String toString() {
      return out.toString();
    }
  }

  /** The largest entries first; ties by name, so the text is the same for the same recording. */
  private static List<Map.Entry<String, Long>> top(Map<String, Long> counts, int n) {
    return counts.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder()).thenComparing(Map.Entry.comparingByKey()))
        .limit(n)
        .toList();
  }

  private static void increment(Map<String, Long> counts, String key, long by) {
    counts.merge(key, by, Long::sum);
  }

  private static String seconds(Duration d) {
    return String.format(Locale.ROOT, "%.2f s", d.toNanos() / 1e9);
  }

  private static String millis(Duration d) {
    return String.format(Locale.ROOT, "%.1f ms", d.toNanos() / 1e6);
  }

  private static String bytes(long b) {
    if (b >= 1L << 30) return String.format(Locale.ROOT, "%.2f GiB", b / (double) (1L << 30));
    if (b >= 1L << 20) return String.format(Locale.ROOT, "%.1f MiB", b / (double) (1L << 20));
    if (b >= 1L << 10) return String.format(Locale.ROOT, "%.1f KiB", b / (double) (1L << 10));
    return b + " B";
  }

  private static Map<String, String> areas(String... prefixAndArea) {
    Map<String, String> areas = new LinkedHashMap<>();
    for (int i = 0; i < prefixAndArea.length; i += 2) areas.put(prefixAndArea[i], prefixAndArea[i + 1]);
    return areas;
  }

  private JfrSummary() {}
}
