package io.flashsale.tools.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

/**
 * C clients, each sending its next request as soon as the previous one answered (a closed loop,
 * like C users), until n requests were sent or the time is up.
 */
public final class ClosedLoop {
  /** What the clients got and the wall time from the first request to the last answer. */
  public record Batch(List<Timed> results, double seconds) {}

  private ClosedLoop() {}

  public static Batch run(int clients, int n, Duration maxDuration, IntFunction<Timed> request) throws Exception {
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    long t0 = System.nanoTime();
    long deadline = t0 + maxDuration.toNanos();
    try {
      List<Future<List<Timed>>> workers = new ArrayList<>();
      for (int k = 0; k < clients; k++) {
        workers.add(pool.submit(() -> {
          List<Timed> mine = new ArrayList<>();
          for (int i = next.getAndIncrement(); i < n && System.nanoTime() < deadline; i = next.getAndIncrement()) {
            long s = System.nanoTime();
            try {
              mine.add(request.apply(i));
            } catch (RuntimeException e) {
              mine.add(new Timed("ERROR_" + e.getClass().getSimpleName(), System.nanoTime() - s));
            }
          }
          return mine;
        }));
      }
      List<Timed> all = new ArrayList<>();
      for (Future<List<Timed>> w : workers) all.addAll(w.get());
      return new Batch(Collections.unmodifiableList(all), (System.nanoTime() - t0) / 1e9);
    } finally {
      pool.shutdownNow();
    }
  }

  /** Times one call that answers an outcome. */
  public static Timed timed(java.util.function.Supplier<String> call) {
    long s = System.nanoTime();
    String outcome = call.get();
    return new Timed(outcome, System.nanoTime() - s);
  }
}
