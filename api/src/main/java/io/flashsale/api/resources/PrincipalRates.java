package io.flashsale.api.resources;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Request rates per principal (docs/DESIGN.md §Overload): a token bucket for each principal and
 * kind, writes (create, pay, cancel, logout) and reads (order reads, lists, exports, streams).
 * A request takes a token; a principal with none left waits, told how long, while every other
 * principal is served. Buckets that have refilled are forgotten when the map grows large, so a
 * crowd of one-time buyers costs no memory after it has gone.
 */
final class PrincipalRates {
  enum Kind { WRITE, READ }

  /** A rate and the burst a quiet principal may spend at once. */
  record Limit(double perSecond, int burst) {
    Limit {
      if (perSecond <= 0 || burst < 1) throw new IllegalArgumentException("a rate limit needs perSecond > 0 and burst >= 1");
    }
  }

  /** Buckets kept before the refilled ones are swept. */
  static final int SWEEP_AT = 100_000;

  private final Limit writes;
  private final Limit reads;
  private final LongSupplier nanoClock;
  private final ConcurrentHashMap<String, Bucket> buckets = new ConcurrentHashMap<>();
  /** The earliest time of the next sweep: one thread sweeps, at most once a second. */
  private final java.util.concurrent.atomic.AtomicLong nextSweepAt = new java.util.concurrent.atomic.AtomicLong();

  PrincipalRates(Limit writes, Limit reads, LongSupplier nanoClock) {
    this.writes = writes;
    this.reads = reads;
    this.nanoClock = nanoClock;
  }

  /** Takes a token: 0 when admitted, else the whole seconds until one is there (at least 1). */
  long admit(String principal, Kind kind) {
    Limit limit = kind == Kind.WRITE ? writes : reads;
    long now = nanoClock.getAsLong();
    long[] waitSeconds = new long[1];
    buckets.compute(kind.name() + " " + principal, (key, b) -> {
      Bucket bucket = b == null ? new Bucket(limit.burst(), now) : b.refilled(limit, now);
      if (bucket.tokens >= 1) return new Bucket(bucket.tokens - 1, now);
      waitSeconds[0] = Math.max(1, (long) Math.ceil((1 - bucket.tokens) / limit.perSecond()));
      return bucket;
    });
    long sweepAt = nextSweepAt.get();
    if (buckets.size() > SWEEP_AT && now - sweepAt >= 0 && nextSweepAt.compareAndSet(sweepAt, now + 1_000_000_000L)) {
      sweep(now);
    }
    return waitSeconds[0];
  }

  /** Forgets the buckets that are full again: the same as never having seen their principal. */
  private void sweep(long now) {
    buckets.entrySet().removeIf(e -> {
      Limit limit = e.getKey().startsWith(Kind.WRITE.name()) ? writes : reads;
      return e.getValue().refilled(limit, now).tokens >= limit.burst();
    });
  }

  int size() {
    return buckets.size();
  }

  private record Bucket(double tokens, long atNanos) {
    Bucket refilled(Limit limit, long now) {
      double added = Math.max(0, now - atNanos) / 1e9 * limit.perSecond();
      return new Bucket(Math.min(limit.burst(), tokens + added), now);
    }
  }
}
