package io.flashsale.persistence;

import static io.flashsale.persistence.TestOrders.TENANT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * On a real PostgreSQL: orders needing attention counted by reason (the metric's one query), and
 * the reconciliation lines carrying each order's time in its status and its attention reason.
 */
class OrderAttentionQueriesTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static void set(String sql, Object... params) {
    pg.db().inTx(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < params.length; i++) ps.setObject(i + 1, params[i]);
        return ps.executeUpdate();
      }
    });
  }

  private static void attention(String orderId, String reason, String detail) {
    set("UPDATE orders SET attention = ?, attention_detail = ?, attention_since = now() WHERE order_id = ?",
        reason, detail, orderId);
  }

  @Test
  void aMarkKeepsItsSinceWhileTheReasonStaysAndIsCleared() {
    TestOrders.create(pg.db(), "ord-mark-1", TENANT, "subject-mark");
    pg.db().inTx(c -> {
      OrderTransitions.markAttention(c, "ord-mark-1", "UNKNOWN_AGED", "first");
      return null;
    });
    set("UPDATE orders SET attention_since = attention_since - interval '1 hour' WHERE order_id = ?", "ord-mark-1");
    pg.db().inTx(c -> {
      OrderTransitions.markAttention(c, "ord-mark-1", "UNKNOWN_AGED", "again");
      return null;
    });
    assertEquals(1, pg.number("SELECT count(*) FROM orders WHERE order_id = 'ord-mark-1' AND attention_detail = 'again'"
        + " AND attention_since < now() - interval '59 minutes'"), "the same reason keeps its since");
    pg.db().inTx(c -> {
      OrderTransitions.markAttention(c, "ord-mark-1", null, "ignored");
      return null;
    });
    assertEquals(1, pg.number("SELECT count(*) FROM orders WHERE order_id = 'ord-mark-1' AND attention IS NULL"
        + " AND attention_detail IS NULL AND attention_since IS NULL AND version = 1"), "cleared, version untouched");
  }

  @Test
  void countsByReasonAndLinesCarryAgeAndReason() {
    OrderQueries queries = new OrderQueries(pg.db());
    assertEquals(Map.of(), queries.attentionCounts(), "no order needs attention");

    for (int i = 1; i <= 5; i++) TestOrders.create(pg.db(), "ord-att-" + i, TENANT, "subject-att-" + i);
    attention("ord-att-1", "REFUND_REFUSED", "channel answered NOT_CHARGED");
    attention("ord-att-2", "UNKNOWN_AGED", "no definite answer for 30m");
    attention("ord-att-3", "UNKNOWN_AGED", "no definite answer for 30m");
    attention("ord-att-4", "SOMETHING_NEWER", "a reason a later version writes");
    // ord-att-5: none; and a cleared one is not counted
    attention("ord-att-5", "DataError", "x");
    set("UPDATE orders SET attention = NULL, attention_detail = NULL, attention_since = NULL WHERE order_id = ?",
        "ord-att-5");
    set("UPDATE orders SET updated_at = now() - interval '2 hours' WHERE order_id = ?", "ord-att-2");

    assertEquals(Map.of("REFUND_REFUSED", 1L, "UNKNOWN_AGED", 2L, "SOMETHING_NEWER", 1L), queries.attentionCounts());

    Map<String, OrderQueries.ReconcileLine> lines = pg.db().inTx(c -> OrderQueries.reconcileLines(c)).stream()
        .filter(l -> l.orderId().startsWith("ord-att-"))
        .collect(Collectors.toMap(OrderQueries.ReconcileLine::orderId, Function.identity()));
    OrderQueries.ReconcileLine aged = lines.get("ord-att-2");
    assertTrue(aged.inStatus().compareTo(Duration.ofMinutes(119)) > 0 && aged.inStatus().compareTo(Duration.ofHours(3)) < 0,
        aged.inStatus().toString());
    assertEquals("UNKNOWN_AGED", aged.attention());
    assertEquals("no definite answer for 30m", aged.attentionDetail());
    assertNotNull(aged.attentionSince());
    OrderQueries.ReconcileLine fresh = lines.get("ord-att-5");
    assertTrue(fresh.inStatus().compareTo(Duration.ofMinutes(5)) < 0, fresh.inStatus().toString());
    assertNull(fresh.attention());
    assertNull(fresh.attentionDetail());
    assertNull(fresh.attentionSince());
  }
}
