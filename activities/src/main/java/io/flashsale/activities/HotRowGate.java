package io.flashsale.activities;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Admits at most {@code permits} admission transactions per SKU at once in this process. Every
 * admission locks its SKU's row until commit, and PostgreSQL runs that row fastest with a few
 * transactions at a time; more only wait in the row's lock queue holding a pooled connection
 * (docs/DESIGN.md §Performance). Here they wait before taking a connection, in arrival order.
 */
public final class HotRowGate {
  /** The wait ran out: the step fails and its retry policy tries again later. */
  public static final class Busy extends RuntimeException {
    Busy(String sku, Duration waited) {
      super("SKU " + sku + ": no admission slot within " + waited.toMillis() + " ms");
    }
  }

  private final int permits;
  private final Duration maxWait;
  private final ConcurrentHashMap<String, Semaphore> bySku = new ConcurrentHashMap<>();

  /** permits ≤ 0: no limit. */
  public HotRowGate(int permits, Duration maxWait) {
    this.permits = permits;
    this.maxWait = maxWait;
  }

  public static HotRowGate unlimited() {
    return new HotRowGate(0, Duration.ZERO);
  }

  public <T> T through(String tenant, String sku, Supplier<T> admission) {
    if (permits <= 0) return admission.get();
    String key = tenant + "\n" + sku;
    Semaphore slots = bySku.computeIfAbsent(key, k -> new Semaphore(permits, true));
    try {
      if (!slots.tryAcquire(maxWait.toMillis(), TimeUnit.MILLISECONDS)) throw new Busy(sku, maxWait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Busy(sku, maxWait);
    }
    try {
      return admission.get();
    } finally {
      slots.release();
    }
  }

  public int permits() {
    return permits;
  }
}
