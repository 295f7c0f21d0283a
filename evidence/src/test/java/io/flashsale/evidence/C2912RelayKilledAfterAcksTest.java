package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.outbox.OutboxRelay;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-12: a relay in its own JVM delivers 3 events, the consumer acknowledges all 3, and the
 * relay is killed (SIGKILL) before it commits "published". The marks roll back, the 3 events are
 * delivered again by the next relay: the consumer records APPLIED=3, DUPLICATE=3, and each order
 * ships once — which reconciliation's fulfillment check, reading the consumer's own shipments,
 * confirms. At-least-once delivery, exactly-once effect. (C29-18 repeats it without the
 * consumer's idempotency.)
 */
@Tag("engine-independent") // its claim is about the relay and the consumer, the same on either engine
class C2912RelayKilledAfterAcksTest {
  // the relay is run by hand
  @RegisterExtension static final Stack stack = new Stack().with("relay.enabled", false);
  @RegisterExtension static final Evidence ev = new Evidence("C29-12", "relay SIGKILL after 3 acks → redelivery");

  @Test
  void relayKilledAfterAcks() throws Exception {
    stack.sku("sku-c2912", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-1201");
    for (int i = 0; i < 3; i++) {
      String id = Buyers.create(buyer, "c2912-" + i, "sku-c2912", 1).text("order_id");
      ev.equal("PAID", Buyers.pay(buyer, id).text("status"), id + " PAID");
    }
    stack.awaitNoticesApplied(3, 10_000);

    RelayCrash.afterAcks(stack, ev, "c2912-relay", 3);

    OutboxRelay restarted = new OutboxRelay(stack.db(), stack.wiring.consumer().url(), stack.wiring.deliverySecret(), 10, 50,
        "restarted");
    restarted.drain();
    ev.equal(3L, restarted.delivered(), "the restarted relay delivered the 3 again");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "all published now");
    ev.equal(Map.of("APPLIED", 3, "DUPLICATE", 3), stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"),
        "consumer effects APPLIED=3, DUPLICATE=3");
    ev.equal(Map.of("1", 3), stack.sql.histogram("SELECT ship_count::text FROM fulfillment.fulfillment"),
        "each order shipped once");

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("fulfillment shipped=3 shipped_more_than_once=0"),
        "the fulfillment check read the consumer's 3 shipments: none more than once");
    stack.checkReconcileClean(ev, "reconcile clean, the fulfillment check included");
  }
}
