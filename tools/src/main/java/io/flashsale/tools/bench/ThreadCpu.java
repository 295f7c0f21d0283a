package io.flashsale.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.stream.Stream;

/**
 * The service JVM's CPU by kind of thread (HTTP, workflow tasks, gRPC, JIT compiler, GC, ...), read
 * from /proc/self/task: every thread's utime + stime and its name (the first 15 characters of the
 * Java name, which the JVM gives the native thread). A sampling profiler only sees Java frames of a
 * few threads per interval; this counts every thread's CPU, compiler and GC threads included.
 *
 * <p>A thread that ended inside the window took its CPU with it from /proc/self/task; the rest of
 * the process's own CPU is reported as {@value #ENDED}.
 */
public final class ThreadCpu {
  static final String ENDED = "ended threads";
  static final String OTHER = "other";

  /**
   * Thread-name prefixes (at most 15 characters: the native name is cut there) and the kind they
   * belong to, first match wins; the rest are {@value #OTHER}.
   */
  static final List<Map.Entry<String, String>> KINDS = List.of(
      Map.entry("dw-", "HTTP (Jetty)"),
      Map.entry("Workflow Execut", "workflow tasks"),
      Map.entry("workflow-", "workflow code"),
      Map.entry("Local Activity", "local activities"),
      Map.entry("LocalActivity", "local activities"),
      Map.entry("Activity Execut", "activity tasks"),
      Map.entry("grpc-", "gRPC"),
      Map.entry("Workflow Poller", "pollers"),
      Map.entry("Activity Poller", "pollers"),
      Map.entry("engine-call", "engine calls"),
      Map.entry("C1 Compiler", "JIT compiler"),
      Map.entry("C2 Compiler", "JIT compiler"),
      Map.entry("GC Thread", "GC"),
      Map.entry("G1 ", "GC"),
      Map.entry("VM ", "JVM internals"),
      Map.entry("Hikari", "JDBC pool"),
      Map.entry("outbox-relay", "outbox relay"),
      Map.entry("fulfillment", "fulfillment consumer"),
      Map.entry("JFR ", "JFR"));

  /**
   * One reading.
   *
   * @param threads CPU nanoseconds by thread id, with the thread's name
   * @param processNanos the whole process's CPU nanoseconds (ended threads included)
   */
  public record Sample(Map<Long, Named> threads, long processNanos) {}

  public record Named(String name, long cpuNanos) {}

  private ThreadCpu() {}

  /** This JVM's threads now, or an empty sample where there is no /proc. */
  public static Sample sample() {
    Map<Long, Named> threads = new LinkedHashMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        try {
          String stat = Files.readString(t.resolve("stat"));
          threads.put(Long.parseLong(t.getFileName().toString()), new Named(name(stat), threadNanos(stat)));
        } catch (IOException | RuntimeException ended) {
          // the thread ended between the listing and the read
        }
      }
      return new Sample(threads, ((com.sun.management.OperatingSystemMXBean)
          java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime());
    } catch (IOException | RuntimeException noProc) {
      return new Sample(Map.of(), 0);
    }
  }

  /** The kind a thread name belongs to. */
  static String kind(String threadName) {
    for (Map.Entry<String, String> k : KINDS) if (threadName.startsWith(k.getKey())) return k.getValue();
    return OTHER;
  }

  /**
   * CPU-seconds by kind between two samples, largest first; a thread new in {@code end} counts from
   * zero, and what the process used beyond its live threads is {@value #ENDED}.
   */
  public static Map<String, Double> between(Sample start, Sample end) {
    Map<String, Double> byKind = new LinkedHashMap<>();
    long live = 0;
    for (Map.Entry<Long, Named> e : end.threads().entrySet()) {
      Named before = start.threads().get(e.getKey());
      long delta = e.getValue().cpuNanos() - (before == null ? 0 : before.cpuNanos());
      live += delta;
      byKind.merge(kind(e.getValue().name()), delta / 1e9, Double::sum);
    }
    long ended = end.processNanos() - start.processNanos() - live;
    if (ended > 0) byKind.merge(ENDED, ended / 1e9, Double::sum);
    Map<String, Double> sorted = new LinkedHashMap<>();
    byKind.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> sorted.put(e.getKey(), e.getValue()));
    return sorted;
  }

  /** "service JVM cpu per created order by thread: HTTP (Jetty) 12 ms, workflow tasks 9.1 ms, ...". */
  public static String perOperationLine(String operation, Map<String, Double> secondsByKind, long successes) {
    if (successes <= 0 || secondsByKind.isEmpty()) return "service JVM by thread: no " + operation;
    StringJoiner j = new StringJoiner(", ", "service JVM cpu per " + operation + " by thread: ", "");
    secondsByKind.forEach((kind, s) -> {
      double ms = 1000 * s / successes;
      if (ms >= 0.05) j.add(kind + " " + CpuSplit.ms(ms) + " ms");
    });
    return j.toString();
  }

  /** The thread's name: field 2 of its stat line, in parentheses (it may hold spaces and parentheses). */
  static String name(String statLine) {
    return statLine.substring(statLine.indexOf('(') + 1, statLine.lastIndexOf(')'));
  }

  /** The thread's own utime + stime (a thread has no reaped children), in nanoseconds. */
  static long threadNanos(String statLine) {
    String[] f = statLine.substring(statLine.lastIndexOf(')') + 2).trim().split("\\s+");
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 1_000_000_000L / ProcStat.TICKS_PER_SECOND;
  }
}
