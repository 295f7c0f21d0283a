package io.flashsale.tools.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * Arrivals at a fixed rate, whatever the answers do (an open loop, like a crowd): request i is due
 * at t0 + i / rate and its latency counts from that moment, so a slow server shows as latency
 * instead of as fewer requests (no coordinated omission).
 */
public final class OpenLoop {
  /** Requests that may wait for their answers at once, by default; past it an arrival is a {@link #BACKLOG} outcome. */
  public static final int MAX_OUTSTANDING = 4_096;
  /** An arrival the client could not send: already that many unanswered. */
  public static final String BACKLOG = "CLIENT_BACKLOG";

  private OpenLoop() {}

  public static ClosedLoop.Batch run(double perSecond, int n, Duration maxDuration, IntFunction<Timed> request)
      throws Exception {
    return run(perSecond, n, maxDuration, MAX_OUTSTANDING, request);
  }

  /** With room for {@code maxOutstanding} unanswered arrivals (a crowd whose buyers retry holds many). */
  public static ClosedLoop.Batch run(double perSecond, int n, Duration maxDuration, int maxOutstanding,
      IntFunction<Timed> request) throws Exception {
    if (perSecond <= 0) throw new IllegalArgumentException("rate must be > 0");
    ExecutorService pool = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "open-loop");
      t.setDaemon(true);
      return t;
    });
    java.util.concurrent.Semaphore outstanding = new java.util.concurrent.Semaphore(maxOutstanding);
    List<Future<Timed>> sent = new ArrayList<>();
    List<Timed> refused = new ArrayList<>();
    long t0 = System.nanoTime();
    long deadline = t0 + maxDuration.toNanos();
    try {
      for (int i = 0; i < n; i++) {
        long due = t0 + (long) (i * 1e9 / perSecond);
        if (due >= deadline) break;
        for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) LockSupport.parkNanos(wait);
        if (!outstanding.tryAcquire()) {
          refused.add(new Timed(BACKLOG, 0));
          continue;
        }
        int k = i;
        sent.add(pool.submit(() -> {
          try {
            Timed t = request.apply(k);
            return new Timed(t.outcome(), System.nanoTime() - due);
          } catch (RuntimeException e) {
            return new Timed(ClosedLoop.failure(e), System.nanoTime() - due);
          } finally {
            outstanding.release();
          }
        }));
      }
      List<Timed> all = new ArrayList<>(refused);
      for (Future<Timed> f : sent) all.add(f.get());
      return new ClosedLoop.Batch(Collections.unmodifiableList(all), (System.nanoTime() - t0) / 1e9);
    } finally {
      pool.shutdownNow();
    }
  }
}
