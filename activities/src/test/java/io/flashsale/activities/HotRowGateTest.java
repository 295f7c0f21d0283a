package io.flashsale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class HotRowGateTest {
  @Test
  void noMoreThanThePermitsRunAtOnceOnOneSkuAndOtherSkusAreNotHeldBack() throws Exception {
    HotRowGate gate = new HotRowGate(2, Duration.ofSeconds(10));
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<Integer>> all = new ArrayList<>();
      for (int i = 0; i < 64; i++) {
        all.add(pool.submit(() -> gate.through("t1", "hot", () -> {
          most.accumulateAndGet(inside.incrementAndGet(), Math::max);
          sleep(3);
          inside.decrementAndGet();
          return 1;
        })));
      }
      // a second SKU passes while the hot one is saturated
      CountDownLatch otherRan = new CountDownLatch(1);
      pool.submit(() -> gate.through("t1", "cold", () -> {
        otherRan.countDown();
        return 0;
      }));
      assertTrue(otherRan.await(5, java.util.concurrent.TimeUnit.SECONDS), "another SKU is not queued behind the hot one");
      int done = 0;
      for (Future<Integer> f : all) done += f.get();
      assertEquals(64, done);
      System.out.println("most admissions inside at once on the hot SKU: " + most.get());
      assertTrue(most.get() <= 2, "at most 2 at once, saw " + most.get());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aWaitLongerThanTheBoundFailsTheAttemptSoItsRetryPolicyTakesOver() throws Exception {
    HotRowGate gate = new HotRowGate(1, Duration.ofMillis(50));
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread holder = new Thread(() -> gate.through("t1", "hot", () -> {
      holding.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return 0;
    }));
    holder.start();
    holding.await();
    assertThrows(HotRowGate.Busy.class, () -> gate.through("t1", "hot", () -> 1));
    release.countDown();
    holder.join();
    assertEquals(1, gate.through("t1", "hot", () -> 1), "free again once the holder left");
  }

  @Test
  void zeroPermitsMeansNoLimit() {
    assertEquals(7, HotRowGate.unlimited().through("t1", "hot", () -> 7));
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
