package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
    assertTrue(split.line().contains("client 4.0 s (20%), service 12.0 s (60%), rest 20%"), split.line());
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
