package io.flashsale.tools.bench;

import java.io.IOException;
import java.net.http.HttpTimeoutException;
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
              mine.add(new Timed(failure(e), System.nanoTime() - s));
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

  /** A request that answered nothing counts as an outcome: the client gave up waiting. */
  public static final String CLIENT_TIMEOUT = "CLIENT_TIMEOUT";
  /** A request that answered nothing counts as an outcome: the connection failed (refused, reset, closed). */
  public static final String CLIENT_IO_ERROR = "CLIENT_IO_ERROR";

  /**
   * The outcome of a call that threw: {@link #CLIENT_TIMEOUT} when an {@link HttpTimeoutException}
   * (the JDK client) or a {@link java.util.concurrent.TimeoutException} (Jetty's) is among its
   * causes, {@link #CLIENT_IO_ERROR} for any other I/O failure, else ERROR_ and the exception's class.
   */
  public static String failure(Throwable e) {
    boolean io = false;
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof HttpTimeoutException || t instanceof java.util.concurrent.TimeoutException) {
        return CLIENT_TIMEOUT;
      }
      if (t instanceof IOException) io = true;
    }
    return io ? CLIENT_IO_ERROR : "ERROR_" + e.getClass().getSimpleName();
  }

  /** Whether an outcome is the client's: no answer came (timeout, I/O error). */
  public static boolean noAnswer(String outcome) {
    return outcome.equals(CLIENT_TIMEOUT) || outcome.equals(CLIENT_IO_ERROR);
  }

  /** Times one call that answers an outcome; a call that throws answers {@link #failure}. */
  public static Timed timed(java.util.function.Supplier<String> call) {
    long s = System.nanoTime();
    String outcome;
    try {
      outcome = call.get();
    } catch (RuntimeException e) {
      outcome = failure(e);
    }
    return new Timed(outcome, System.nanoTime() - s);
  }
}
