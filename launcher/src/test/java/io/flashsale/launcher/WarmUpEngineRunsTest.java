package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The warm-up's engine part (docs/DESIGN.md §Warm from the first buyer): it makes its runs and
 * says how many; an engine that refuses or never answers ends the part within its bound, and the
 * instance still comes up (the part returns, saying it stopped).
 */
class WarmUpEngineRunsTest {
  @Test
  void makesEveryRunOnceAndSaysHowMany() throws Exception {
    Set<Integer> made = ConcurrentHashMap.newKeySet();
    java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
    String said = new WarmUp(Duration.ofSeconds(30), null, null, n -> {
      calls.incrementAndGet();
      made.add(n);
    }).engineRuns();
    assertEquals(WarmUp.ENGINE_RUNS, calls.get(), "one call per run: " + said);
    assertEquals(WarmUp.ENGINE_RUNS, made.size(), said);
    assertTrue(made.stream().allMatch(n -> n >= 0 && n < WarmUp.ENGINE_RUNS), "each run numbered once");
    assertTrue(said.startsWith(WarmUp.ENGINE_RUNS + " runs with no effect through the engine in ") && !said.contains("stopped"), said);
  }

  @Test
  void aRefusalEndsThePart() throws Exception {
    String said = new WarmUp(Duration.ofSeconds(30), null, null, n -> {
      throw new IllegalStateException("unknown workflow type");
    }).engineRuns();
    assertTrue(said.startsWith("0 runs") && said.contains("stopped: run ") && said.contains("unknown workflow type"), said);
  }

  @Test
  void aRunNeverAnsweredEndsThePartWithinItsBound() throws Exception {
    CountDownLatch never = new CountDownLatch(1);
    long start = System.nanoTime();
    // each client's first run is answered, the next never: a part long enough that only the
    // per-run bound can end it this early
    java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
    String said = new WarmUp(Duration.ofSeconds(120), null, null, n -> {
      if (calls.incrementAndGet() > WarmUp.CLIENTS) never.await();
    }).engineRuns();
    double seconds = (System.nanoTime() - start) / 1e9;
    never.countDown();
    assertTrue(said.contains("stopped: a run was not answered within " + WarmUp.ENGINE_CALL_BOUND), said);
    // the bound, with room for a loaded machine, far from the part's 120 s: not a speed check
    assertTrue(seconds < WarmUp.ENGINE_CALL_BOUND.toSeconds() + 20, seconds + " s");
  }

  @Test
  void aFirstRunGetsLongerThanTheOthers() throws Exception {
    // a client's first run loads the path: one answered after twice the later bound does not stop the part
    long slow = 2 * WarmUp.ENGINE_CALL_BOUND.toMillis();
    assertTrue(Duration.ofMillis(slow).compareTo(WarmUp.FIRST_CALL_BOUND) < 0);
    java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
    String said = new WarmUp(Duration.ofSeconds(30), null, null, n -> {
      if (calls.incrementAndGet() <= WarmUp.CLIENTS) Thread.sleep(slow);
    }).engineRuns();
    assertTrue(!said.contains("stopped") && said.startsWith(WarmUp.ENGINE_RUNS + " runs"), said);
  }

  @Test
  void replaysEachOnceUpToTheirNumberAndAFailureEndsThePart() {
    java.util.List<Integer> replayed = new java.util.ArrayList<>();
    String said = new WarmUp(Duration.ofSeconds(30), null, null, null).replaying(replayed::add).replays();
    assertEquals(WarmUp.REPLAYS, replayed.size(), said);
    assertEquals(java.util.stream.IntStream.range(0, WarmUp.REPLAYS).boxed().toList(), replayed, "in order, each once");
    assertTrue(said.startsWith(WarmUp.REPLAYS + " order histories replayed in ") && !said.contains("stopped"), said);

    String failed = new WarmUp(Duration.ofSeconds(30), null, null, null).replaying(n -> {
      if (n == 3) throw new IllegalStateException("nondeterministic: TMPRL1100");
    }).replays();
    assertTrue(failed.startsWith("3 order histories replayed") && failed.contains("stopped: replay 3: ")
        && failed.contains("TMPRL1100"), failed);
  }

  @Test
  void onlyAProcessRunningTheOrderWorkflowsWarmsTheirPath() {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    assertEquals(false, FlashsaleApplication.warmsTheWorkflowPath(cfg), "the class's default: no warm-up");
    cfg.warmUp.duration = io.dropwizard.util.Duration.seconds(10); // embedded.yml's
    assertTrue(FlashsaleApplication.warmsTheWorkflowPath(cfg), "a worker with the workflows, warm-up on");
    cfg.worker = false; // an API without a worker (the compose file's API)
    assertEquals(false, FlashsaleApplication.warmsTheWorkflowPath(cfg), "worker: false");
    cfg.worker = true;
    cfg.workerWorkflows = false; // a worker of activities only
    assertEquals(false, FlashsaleApplication.warmsTheWorkflowPath(cfg), "workerWorkflows: false");
    cfg.workerWorkflows = true;
    cfg.warmUp.duration = io.dropwizard.util.Duration.seconds(0);
    assertEquals(false, FlashsaleApplication.warmsTheWorkflowPath(cfg), "warmUp.duration 0s");
  }
}
