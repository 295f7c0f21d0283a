package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The service JVM's CPU by kind of thread, from every thread's counters in /proc/self/task. */
class ThreadCpuTest {
  private static final long S = 1_000_000_000L;

  @Test
  void threadNamesMapToTheirKindAndUnknownOnesToOther() {
    assertEquals("HTTP (Jetty)", ThreadCpu.kind("dw-45 - POST /o"));
    assertEquals("workflow tasks", ThreadCpu.kind("Workflow Execut"));
    assertEquals("workflow code", ThreadCpu.kind("workflow-thread"));
    assertEquals("JIT compiler", ThreadCpu.kind("C2 CompilerThre"));
    assertEquals("GC", ThreadCpu.kind("G1 Conc#0"));
    assertEquals("GC", ThreadCpu.kind("GC Thread#1"));
    assertEquals("other", ThreadCpu.kind("java"));
  }

  @Test
  void theStatLineGivesTheNameAndTheThreadsOwnTimes() {
    // name with spaces and a parenthesis; utime 250 + stime 50 ticks; cutime/cstime (99) are not the thread's
    String stat = "4242 (dw-7 - GET (x)) S 1 1 1 0 -1 4194560 0 0 0 0 250 50 99 99 20 0 30 0 1 1 1";
    assertEquals("dw-7 - GET (x)", ThreadCpu.name(stat));
    assertEquals(3 * S, ThreadCpu.threadNanos(stat));
  }

  @Test
  void aNewThreadCountsFromZeroAndWhatEndedThreadsUsedIsTheRest() {
    ThreadCpu.Sample start = new ThreadCpu.Sample(Map.of(
        1L, new ThreadCpu.Named("dw-1", 2 * S),
        2L, new ThreadCpu.Named("C2 CompilerThre", 5 * S),
        3L, new ThreadCpu.Named("dw-2", 1 * S)), 20 * S);
    ThreadCpu.Sample end = new ThreadCpu.Sample(Map.of(
        1L, new ThreadCpu.Named("dw-1 - POST /or", 6 * S), // +4, renamed by the request
        2L, new ThreadCpu.Named("C2 CompilerThre", 6 * S), // +1
        4L, new ThreadCpu.Named("Workflow Execut", 2 * S)), 30 * S); // new: +2; thread 3 ended

    Map<String, Double> byKind = ThreadCpu.between(start, end);

    assertEquals(List.of("HTTP (Jetty)", "ended threads", "workflow tasks", "JIT compiler"), List.copyOf(byKind.keySet()));
    assertEquals(4.0, byKind.get("HTTP (Jetty)"), 1e-9);
    assertEquals(3.0, byKind.get("ended threads"), 1e-9); // 10 s of process CPU, 7 s on live threads
    assertEquals(10.0, byKind.values().stream().mapToDouble(Double::doubleValue).sum(), 1e-9);
    assertEquals("service JVM cpu per created order by thread: HTTP (Jetty) 40 ms, ended threads 30 ms, "
        + "workflow tasks 20 ms, JIT compiler 10 ms", ThreadCpu.perOperationLine("created order", byKind, 100));
  }

  @Test
  void aBusyThreadsCpuIsFoundUnderItsKind() throws Exception {
    ThreadCpu.Sample start = ThreadCpu.sample();
    // the thread spins until it has used 100 ms of CPU by its own count, then stays alive until
    // the second sample is read: what it used does not depend on how busy the machine is
    java.util.concurrent.CountDownLatch spun = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch sampled = new java.util.concurrent.CountDownLatch(1);
    Thread busy = new Thread(() -> {
      java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
      long x = 0;
      while (mx.getCurrentThreadCpuTime() < 100_000_000L) x += System.identityHashCode(new Object());
      if (x == 42) System.out.print("");
      spun.countDown();
      try {
        sampled.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "dw-busy");
    busy.start();
    spun.await(); // read while it is alive, so its CPU is under its own name
    ThreadCpu.Sample end = ThreadCpu.sample();
    sampled.countDown();
    busy.join();

    double http = ThreadCpu.between(start, end).getOrDefault("HTTP (Jetty)", 0.0);
    assertTrue(http >= 0.05, "the spinning dw- thread's CPU is counted under HTTP: " + http + " s");
  }
}
