package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.outbox.OutboxRelay;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-18 (negative control): the relay is at-least-once, so the consumer must be idempotent.
 * C29-12's crash again — a relay in its own JVM delivers 3 events, the consumer acknowledges
 * them, the relay is SIGKILLed before it marks them published, the next relay delivers them
 * again — with the consumer's idempotency (inbox and version guard, one safeguard) switched off.
 * Every order ships twice, and reconciliation's fulfillment check, reading the consumer's own
 * shipments through the consumer's port, names each one: SHIPPED_MORE_THAN_ONCE. With the
 * safeguard on (C29-12) the same check is clean.
 */
@Tag("engine-independent") // its claim is about the relay and the consumer, the same on either engine
class C2918ConsumerWithoutDedupTest {
  // the relay is run by hand
  @RegisterExtension static final Stack stack = new Stack().with("relay.enabled", false);
  @RegisterExtension static final AfterAllCallback restore = context -> {
    if (stack.wiring != null && stack.wiring.consumer() != null) stack.wiring.consumer().restoreIdempotency();
  };
  @RegisterExtension static final Evidence ev = new Evidence("C29-18", "negative control: consumer without dedup");

  @Test
  void redeliveryShipsTwiceAndReconciliationSaysSo() throws Exception {
    stack.sku("sku-c2918", 10, 3);
    HttpJson buyer = stack.api.login("t1", "user-1801");
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String id = Buyers.create(buyer, "c2918-" + i, "sku-c2918", 1).text("order_id");
      ev.equal("PAID", Buyers.pay(buyer, id).text("status"), id + " PAID");
      ids.add(id);
    }
    stack.awaitNoticesApplied(3, 10_000);

    stack.wiring.consumer().switchOffIdempotency();
    try {
      RelayCrash.afterAcks(stack, ev, "c2918-relay", 3);
      OutboxRelay restarted = new OutboxRelay(stack.db(), stack.wiring.consumer().url(), stack.wiring.deliverySecret(), 10,
          50, "restarted");
      restarted.drain();
      ev.equal(3L, restarted.delivered(), "the restarted relay delivered the 3 again");
    } finally {
      stack.wiring.consumer().restoreIdempotency();
    }
    ev.note("consumer effects " + stack.sql.histogram("SELECT effect FROM fulfillment.ful_received")
        + ", ship counts " + stack.sql.histogram("SELECT ship_count::text FROM fulfillment.fulfillment"));

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("fulfillment shipped=3 shipped_more_than_once=3"),
        "the fulfillment check read the consumer's shipments: 3 orders, each more than once");
    for (String id : ids) {
      ev.check(report.contains("mismatch " + id + " PAID SHIPPED_MORE_THAN_ONCE shipped=2"),
          "caught: " + id + " shipped twice (SHIPPED_MORE_THAN_ONCE)");
    }
    String summary = report.trim().lines().reduce((x, y) -> y).orElse("");
    ev.check(summary.contains(" mismatches=3 ") && summary.contains(" pending=0 ")
            && summary.contains("channel_net=5970 paid_sum=5970 confirmed=3 paid=3 drift=0"),
        "nothing else is wrong: money, orders and stock agree; only the fulfillment check fails");
  }
}
