package io.flashsale.tools.bench;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Creates as a buyer makes them: a 503 (OVERLOADED, ENGINE_UNAVAILABLE) is sent again with the same
 * request key after its Retry-After, for up to {@link #RETRY_FOR}, so an order the first attempt
 * made is answered REPLAY. Counts every HTTP answer, the 503s, and those that took over 2 s (the
 * wait a buyer's page allows).
 */
final class Answers {
  static final Duration RETRY_FOR = Duration.ofSeconds(30);
  static final long PATIENCE_NANOS = 2_000_000_000L;

  final LongAdder answers = new LongAdder();
  final LongAdder unavailable = new LongAdder();
  final LongAdder afterPatience = new LongAdder();
  private final java.util.concurrent.atomic.AtomicLong slowest = new java.util.concurrent.atomic.AtomicLong();
  /** Each 503's own wait: a refusal must come at once, an engine deadline at 1.5 s. */
  private final java.util.Queue<Long> unavailableNanos = new java.util.concurrent.ConcurrentLinkedQueue<>();

  /** One buyer's create, timed from the first send to the answer that is not a 503. */
  Timed create(HttpJson buyer, String sku, String key) {
    Map<String, Object> body = Map.of("request_key", key, "sku", sku, "quantity", 1);
    long first = System.nanoTime();
    long giveUp = first + RETRY_FOR.toNanos();
    while (true) {
      long t0 = System.nanoTime();
      HttpJson.Reply r;
      try {
        r = buyer.post("/orders", body);
      } catch (RuntimeException e) {
        return new Timed(ClosedLoop.failure(e), System.nanoTime() - first);
      }
      long took = System.nanoTime() - t0;
      answers.increment();
      if (took > PATIENCE_NANOS) afterPatience.increment();
      slowest.accumulateAndGet(took, Math::max);
      if (r.status() != 503 || System.nanoTime() > giveUp) {
        return new Timed(LoadContext.outcome(r, "outcome"), System.nanoTime() - first);
      }
      unavailable.increment();
      unavailableNanos.add(took);
      sleep(Math.max(100, HttpJson.retryAfterMillis(r.header("Retry-After"), 1_000, 5_000)));
    }
  }

  /** The figures for a scenario's metrics. */
  void into(Map<String, Double> m) {
    m.put("http answers", answers.doubleValue());
    m.put("503 answers (sent again)", unavailable.doubleValue());
    m.put("answers after 2 s", afterPatience.doubleValue());
    m.put("slowest answer ms", slowest.get() / 1e6);
    if (!unavailableNanos.isEmpty()) { // the 503s' own latency (OVERLOADED at once, ENGINE_UNAVAILABLE at the deadline)
      java.util.List<Long> each = new java.util.ArrayList<>(unavailableNanos);
      java.util.Collections.sort(each);
      m.put("overloaded p50 ms", Stats.pct(each, 50));
      m.put("overloaded p99 ms", Stats.pct(each, 99));
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
