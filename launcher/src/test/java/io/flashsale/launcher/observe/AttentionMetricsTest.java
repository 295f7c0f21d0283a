package io.flashsale.launcher.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.persistence.Database;
import io.flashsale.persistence.OrderQueries;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.PreparedStatement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Orders needing attention as the scrape shows them: one gauge per reason, one query per scrape at
 * most (a few seconds' cache), unknown reasons under OTHER, a failed query NaN; and on a real
 * PostgreSQL, the counts of orders.attention.
 */
class AttentionMetricsTest {
  private static final String METRIC = "flashsale_orders_needing_attention";

  private static double sample(String scrape, String reason) {
    Matcher m = Pattern.compile("(?m)^" + METRIC + "\\{reason=\"" + Pattern.quote(reason) + "\"} (\\S+)$").matcher(scrape);
    assertTrue(m.find(), reason + " in\n" + scrape);
    return Double.parseDouble(m.group(1));
  }

  @Test
  void oneQueryPerScrapeAtMostAndEveryReasonShown() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    AtomicInteger queries = new AtomicInteger();
    AtomicLong nanos = new AtomicLong();
    Map<String, Long> stored = new HashMap<>(Map.of("REFUND_REFUSED", 2L, "UNKNOWN_AGED", 1L, "LATER_REASON", 4L));
    AttentionMetrics.register(registry, () -> {
      queries.incrementAndGet();
      return stored;
    }, nanos::get);

    String text = registry.scrape();
    assertEquals(1, queries.get(), "one query for every gauge of a scrape");
    assertEquals(2, sample(text, "REFUND_REFUSED"));
    assertEquals(1, sample(text, "UNKNOWN_AGED"));
    assertEquals(0, sample(text, "REFUND_AGED"));
    assertEquals(0, sample(text, "DataError"));
    assertEquals(4, sample(text, AttentionMetrics.OTHER), "a reason this version does not know");

    stored.put("REFUND_REFUSED", 3L);
    nanos.addAndGet(AttentionMetrics.CACHED_FOR.toNanos() - 1);
    assertEquals(2, sample(registry.scrape(), "REFUND_REFUSED"), "within the cache: the same read");
    assertEquals(1, queries.get());
    nanos.addAndGet(1);
    assertEquals(3, sample(registry.scrape(), "REFUND_REFUSED"), "past it: read again");
    assertEquals(2, queries.get());
  }

  @Test
  void aFailedQueryIsNaNForAWhileNotAnError() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    AtomicInteger queries = new AtomicInteger();
    AttentionMetrics.register(registry, () -> {
      queries.incrementAndGet();
      throw new IllegalStateException("database down");
    }, () -> 0L);
    String text = registry.scrape();
    assertTrue(Double.isNaN(sample(text, "REFUND_REFUSED")), text);
    registry.scrape();
    assertEquals(1, queries.get(), "a down database is not asked again on every gauge and scrape");
  }

  @Test
  void countsTheOrdersThatNeedAttentionOnPostgres() throws Exception {
    try (EmbeddedPostgres postgres = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start();
        Database db = new Database(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "postgres", 2)) {
      db.migrate();
      PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
      AttentionMetrics.register(registry, new OrderQueries(db)::attentionCounts);
      List<String> reasons = List.of("REFUND_REFUSED", "UNKNOWN_AGED", "UNKNOWN_AGED", "", "DataError");
      db.inTx(c -> {
        for (int i = 0; i < reasons.size(); i++) {
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders (order_id, tenant, subject, request_key,"
              + " payload, sku, quantity, amount, status, version, reservation_key, workflow_id, attention,"
              + " attention_detail, attention_since) VALUES (?, 't1', ?, ?, '{}', 'sku-1', 1, 1990, 'UNKNOWN', 2,"
              + " ?, ?, ?, 'detail', now())")) {
            String id = "ord-m" + i;
            ps.setString(1, id);
            ps.setString(2, "s" + i);
            ps.setString(3, "k" + i);
            ps.setString(4, id + ":r1");
            ps.setString(5, "order:" + id);
            ps.setString(6, reasons.get(i).isEmpty() ? null : reasons.get(i));
            ps.executeUpdate();
          }
        }
        return null;
      });
      String text = registry.scrape();
      assertEquals(1, sample(text, "REFUND_REFUSED"));
      assertEquals(2, sample(text, "UNKNOWN_AGED"));
      assertEquals(1, sample(text, "DataError"));
      assertEquals(0, sample(text, "REFUND_AGED"));
      assertEquals(0, sample(text, AttentionMetrics.OTHER));
    }
  }
}
