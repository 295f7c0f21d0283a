package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Who used the machine over a window: the deltas of the CPU counters against cores x wall time. */
class CpuSplitTest {
  private static final long S = 1_000_000_000L;

  @Test
  void theSplitIsTheDeltaOfEachSideAgainstCoresTimesWallTime() {
    CpuSplit.Sample start = new CpuSplit.Sample(100 * S, 50 * S, 3 * S);
    CpuSplit.Sample end = new CpuSplit.Sample(110 * S, 62 * S, 7 * S); // 10 s wall, service 12 s, client 4 s

    CpuSplit split = CpuSplit.between(start, end, 2);

    assertEquals(10.0, split.wallSeconds(), 1e-9);
    assertEquals(12.0, split.serviceSeconds(), 1e-9);
    assertEquals(4.0, split.clientSeconds(), 1e-9);
    assertEquals(0.6, split.serviceShare(), 1e-9); // 12 of 20 core-seconds
    assertEquals(0.2, split.clientShare(), 1e-9);
    assertEquals(0.2, split.idleShare(), 1e-9);
    assertTrue(split.line().contains("client 4.0 s (20%), service 12.0 s (60%) = jvm 12.0 s (60%), rest 20%"), split.line());
  }

  @Test
  void theServiceIsSplitIntoItsPartsWhoseSumIsTheServiceFigure() {
    CpuSplit.Sample start = new CpuSplit.Sample(0, Map.of(CpuSplit.JVM, 10 * S, CpuSplit.TEMPORAL, 5 * S,
        CpuSplit.POSTGRES, 2 * S), 1 * S);
    // 100 s wall on 2 cores; jvm +60, temporal +45, postgres +14 (a backend that came and went included), client +3
    CpuSplit.Sample end = new CpuSplit.Sample(100 * S, Map.of(CpuSplit.POSTGRES, 16 * S, CpuSplit.JVM, 70 * S,
        CpuSplit.TEMPORAL, 50 * S), 4 * S);

    CpuSplit split = CpuSplit.between(start, end, 2);

    assertEquals(List.of("jvm", "temporal", "postgres"), List.copyOf(split.serviceParts().keySet())); // report order
    assertEquals(119.0, split.serviceSeconds(), 1e-9);
    assertEquals((end.serviceNanos() - start.serviceNanos()) / 1e9, split.serviceSeconds(), 1e-9);
    assertEquals(0.595, split.serviceShare(), 1e-9);
    assertEquals(0.3, split.share(split.serviceParts().get("jvm")), 1e-9);
    assertTrue(split.line().contains("service 119.0 s (60%) = jvm 60.0 s (30%) + temporal 45.0 s (23%) + postgres 14.0 s (7%)"),
        split.line());
  }

  @Test
  void aPartWithoutAProcessIsLeftOutAndOneThatAppearsCountsFromZero() {
    CpuSplit.Sample start = new CpuSplit.Sample(0, Map.of(CpuSplit.JVM, 1 * S), 0);
    CpuSplit.Sample end = new CpuSplit.Sample(10 * S, Map.of(CpuSplit.JVM, 3 * S, CpuSplit.OTHER, S / 2), 0);

    CpuSplit split = CpuSplit.between(start, end, 2);

    assertEquals(Map.of("jvm", 2.0, "other", 0.5), split.serviceParts()); // no temporal (in-memory engine)
    assertFalse(split.line().contains("temporal"), split.line());
  }

  @Test
  void cpuPerOperationIsEachPartsCpuMillisecondsOverTheSuccesses() {
    CpuSplit split = new CpuSplit(10, 3, Map.of("jvm", 60.0, "temporal", 44.0, "postgres", 14.0), 2);

    Map<String, Double> perOp = split.msPerOperation(2000);

    assertEquals(List.of("jvm", "temporal", "postgres", "client"), List.copyOf(perOp.keySet()));
    assertEquals(30.0, perOp.get("jvm"), 1e-9); // 60 CPU-s / 2000 orders = 30 ms each
    assertEquals(22.0, perOp.get("temporal"), 1e-9);
    assertEquals(7.0, perOp.get("postgres"), 1e-9);
    assertEquals(1.5, perOp.get("client"), 1e-9);
    assertEquals("cpu per created order: jvm 30 ms, temporal 22 ms, postgres 7.0 ms, client 1.5 ms",
        split.perOperationLine("created order", 2000));
    assertEquals("cpu per PAID order: jvm 0.60 ms, client 0.03 ms",
        new CpuSplit(1, 0.03, Map.of("jvm", 0.6), 2).perOperationLine("PAID order", 1000));
  }

  @Test
  void noSuccessMeansNoCpuPerOperationRatherThanInfinity() {
    CpuSplit split = new CpuSplit(10, 3, Map.of("jvm", 6.0), 2);
    assertTrue(split.msPerOperation(0).isEmpty());
    assertEquals("no created order: no CPU per created order", split.perOperationLine("created order", 0));
  }

  @Test
  void theMedianOfCpuPerOperationIsTakenPartByPart() {
    Map<String, Double> m = Stats.medianByKey(List.of(
        Map.of("jvm", 30.0, "postgres", 7.0), Map.of("jvm", 10.0, "postgres", 9.0), Map.of("jvm", 20.0)));
    assertEquals(Map.of("jvm", 20.0, "postgres", 8.0), m);
  }

  @Test
  void processesAreAttributedByName() {
    assertEquals(CpuSplit.TEMPORAL, ServiceCpu.part("/home/u/.tools/bin/temporal"));
    assertEquals(CpuSplit.POSTGRES, ServiceCpu.part("/tmp/embedded-pg/bin/postgres"));
    assertEquals(CpuSplit.POSTGRES, ServiceCpu.part("/tmp/embedded-pg/bin/pg_ctl"));
    assertEquals(CpuSplit.OTHER, ServiceCpu.part("/usr/bin/sh"));
    assertEquals(CpuSplit.OTHER, ServiceCpu.part(""));
  }

  @Test
  void anEmptyWindowHasNoShare() {
    CpuSplit.Sample s = new CpuSplit.Sample(S, S, S);
    assertTrue(Double.isNaN(CpuSplit.between(s, s, 2).clientShare()));
  }

  @Test
  void aStatLineGivesOwnAndReapedChildrenTimeInNanoseconds() {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
    String stat = "4242 (postgres: bench (x) ) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 12345 0 0";

    // 250 + 50 + 7 + 3 = 310 ticks of 1/100 s
    assertEquals(3_100_000_000L, ProcStat.cpuNanos(stat, 100));
  }

  @Test
  void aProcessThatIsGoneHasNoCpuReading() {
    assertTrue(ProcStat.cpuNanos(Long.MAX_VALUE).isEmpty());
  }
}
