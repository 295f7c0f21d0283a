package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The profile summary, read from real recordings made here: one busy, one nearly empty. */
class JfrSummaryTest {
  private static final String BUSY_METHOD = JfrSummaryTest.class.getName() + ".spinOnTheCpuForTheProfiler";

  @TempDir Path dir;

  private static volatile long sink; // keeps the loop's result alive, so the JIT cannot drop the loop

  @Test
  void aCpuBoundMethodTopsTheSelfTimeListAndEverySectionIsThere() throws Exception {
    Path jfr = dir.resolve("busy.jfr");
    try (Recording recording = new Recording()) {
      recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(5));
      recording.enable("jdk.GarbageCollection");
      recording.enable("jdk.ObjectAllocationSample");
      recording.start();
      spinOnTheCpuForTheProfiler(Duration.ofMillis(1000));
      System.gc(); // one collection for the GC section
      recording.stop();
      recording.dump(jfr);
    }
    Map<String, String> areas = new LinkedHashMap<>();
    areas.put("io.flashsale.tools.bench.", "bench tools");
    areas.put("org.junit.", "JUnit");
    areas.put("java.", "JDK");

    String summary = JfrSummary.summarise(jfr, 5, areas);

    for (String header : List.of("span:", "CPU samples:", "== Top 5 methods by self samples", "== Top 5 methods by total samples",
        "== Samples by area", "== Top 5 threads by samples", "== Allocation", "== GC", "== Lock contention", "== Thread park")) {
      assertTrue(summary.contains(header), () -> "has " + header + ":\n" + summary);
    }
    String selfSection = section(summary, "== Top 5 methods by self samples");
    assertTrue(selfSection.contains(BUSY_METHOD), () -> "the busy method is in the self-time list:\n" + summary);
    // Every frame below the busy method (the test, reflection, JUnit) is on the stack of every sample, so they
    // tie above it in the total list and can fill a short one; a list long enough for the whole stack must show it.
    String wide = JfrSummary.summarise(jfr, 200, areas);
    assertTrue(section(wide, "== Top 200 methods by total samples").contains(BUSY_METHOD), wide);
    assertTrue(section(summary, "== Samples by area").contains("bench tools"), summary);
    assertTrue(section(summary, "== GC").contains("collections"), summary);
    assertTrue(summary.contains("(no jdk.JavaMonitorEnter events in this recording)"), summary);
  }

  @Test
  void aRecordingWithoutSamplesSaysWhatIsMissingInsteadOfFailing() throws Exception {
    Path jfr = dir.resolve("quiet.jfr");
    try (Recording recording = new Recording()) {
      recording.enable("jdk.JVMInformation");
      recording.start();
      recording.stop();
      recording.dump(jfr);
    }

    String summary = JfrSummary.summarise(jfr);

    assertTrue(summary.contains("CPU samples: 0 jdk.ExecutionSample"), summary);
    assertTrue(summary.contains("(no jdk.ExecutionSample events in this recording)"), summary);
    assertTrue(summary.contains("(no jdk.ObjectAllocationSample events in this recording)"), summary);
    assertTrue(summary.contains("(no jdk.GarbageCollection events in this recording)"), summary);
  }

  @Test
  void aSampleBelongsToItsFirstNonJdkFrameFromTheTop() {
    Map<String, String> areas = JfrSummary.FLASHSALE_AREAS;

    // HashMap.get called by the service is the service's time.
    assertEquals("service", JfrSummary.areaOf(List.of("java.util.HashMap", "io.flashsale.api.Orders", "org.eclipse.jetty.Server"), areas));
    assertEquals("JDBC", JfrSummary.areaOf(List.of("sun.nio.ch.SocketDispatcher", "org.postgresql.core.PGStream", "io.flashsale.X"), areas));
    assertEquals("JDK", JfrSummary.areaOf(List.of("java.lang.Thread", "java.lang.Object"), areas), "JDK frames only");
    assertEquals("other", JfrSummary.areaOf(List.of("java.lang.String", "org.example.Lib"), areas), "no prefix matches");
    assertEquals("JDK", JfrSummary.areaOf(List.of("jdk.internal.Misc"), Map.of()), "JDK even when the caller names no JDK area");
  }

  /** CPU work in one method that calls nothing in its loop, so the samples land on it. */
  private static void spinOnTheCpuForTheProfiler(Duration howLong) {
    long deadline = System.nanoTime() + howLong.toNanos();
    long x = 1;
    while (System.nanoTime() < deadline) {
      for (int i = 0; i < 1_000_000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
    }
    sink = x;
  }

  private static String section(String summary, String header) {
    int start = summary.indexOf(header);
    int end = summary.indexOf("\n==", start + header.length());
    return summary.substring(start, end < 0 ? summary.length() : end);
  }
}
