package io.flashsale.launcher.observe;

import io.flashsale.domain.Attention;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Orders needing attention, by reason (docs/DESIGN.md §Reconciliation): one gauge
 * {@value #NAME} per {@link Attention} value (tag {@code reason}: the stored value, e.g.
 * {@code REFUND_REFUSED}, {@code DataError}), plus {@value #OTHER} for a stored value this version
 * does not know. The values come from one query ({@code OrderQueries.attentionCounts}) kept for
 * {@link #CACHED_FOR}, so a scrape reads the database at most once and a burst of scrapes once. A
 * failed query gives NaN for that while. Only a metric: no health check reads it, so an order
 * stuck for an operator never makes the service unhealthy.
 */
public final class AttentionMetrics {
  private static final Logger log = LoggerFactory.getLogger(AttentionMetrics.class);

  /** As Prometheus shows it: {@code flashsale_orders_needing_attention{reason="…"}}. */
  public static final String NAME = "flashsale.orders.needing.attention";
  public static final String REASON_TAG = "reason";
  /** The reason tag of stored values no {@link Attention} names (written by a later version). */
  public static final String OTHER = "OTHER";
  public static final Duration CACHED_FOR = Duration.ofSeconds(5);

  private final Supplier<Map<String, Long>> query;
  private final LongSupplier nanoTime;
  private Map<String, Long> counts;
  private long readAt;
  private boolean read;

  AttentionMetrics(Supplier<Map<String, Long>> query, LongSupplier nanoTime) {
    this.query = query;
    this.nanoTime = nanoTime;
  }

  /** The reason tags the gauges have: every Attention's stored value, then OTHER. */
  public static List<String> reasons() {
    List<String> out = new ArrayList<>();
    for (Attention a : Attention.values()) out.add(a.value());
    out.add(OTHER);
    return out;
  }

  /** Registers the gauges; query answers stored reason → number of orders (absent: none). */
  public static AttentionMetrics register(MeterRegistry registry, Supplier<Map<String, Long>> query) {
    return register(registry, query, System::nanoTime);
  }

  static AttentionMetrics register(MeterRegistry registry, Supplier<Map<String, Long>> query, LongSupplier nanoTime) {
    AttentionMetrics m = new AttentionMetrics(query, nanoTime);
    for (String reason : reasons()) {
      Gauge.builder(NAME, m, x -> x.count(reason)).tag(REASON_TAG, reason).strongReference(true)
          .description("Orders whose workflow marked them as needing an operator (orders.attention), by reason")
          .register(registry);
    }
    return m;
  }

  /** The number of orders with this reason tag, from a read at most {@link #CACHED_FOR} old; NaN if it failed. */
  synchronized double count(String reason) {
    long now = nanoTime.getAsLong();
    if (!read || now - readAt >= CACHED_FOR.toNanos()) {
      read = true;
      readAt = now;
      try {
        counts = Map.copyOf(query.get());
      } catch (RuntimeException e) {
        counts = null;
        log.warn("orders needing attention not counted: {}", e.toString());
      }
    }
    if (counts == null) return Double.NaN;
    if (!reason.equals(OTHER)) return counts.getOrDefault(reason, 0L);
    return counts.entrySet().stream().filter(e -> Attention.of(e.getKey()) == null).mapToLong(Map.Entry::getValue).sum();
  }
}
