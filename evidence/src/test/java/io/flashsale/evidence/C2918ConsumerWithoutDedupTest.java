package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.fulfillment.FulfillmentConsumer;
import io.flashsale.outbox.OutboxRelay;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-18 (negative control): the relay is at-least-once, so the consumer must dedup. Three PAID
 * orders are delivered, their "published" marks are lost (as when a relay dies before its
 * commit, C29-12) and the events are delivered again. With dedup on: APPLIED=3, DUPLICATE=3,
 * shipped once each. With dedup switched off: the same redelivery ships each order twice.
 */
class C2918ConsumerWithoutDedupTest {
  @RegisterExtension static final Stack stack = new Stack().with("relay.enabled", false);
  @RegisterExtension static final AfterAllCallback restore = context -> FulfillmentConsumer.dedup = true;
  @RegisterExtension static final Evidence ev = new Evidence("C29-18", "negative control: consumer without dedup");

  @Test
  void redeliveryShipsTwiceWithoutDedup() throws Exception {
    stack.sku("sku-c2918", 10, 3);
    HttpJson buyer = stack.api.login("t1", "user-1801");
    for (int i = 0; i < 3; i++) {
      Buyers.pay(buyer, Buyers.create(buyer, "c2918-" + i, "sku-c2918", 1).text("order_id"));
    }
    OutboxRelay relay = new OutboxRelay(stack.db(), stack.wiring.consumer().url(), 10, 50, "c2918");

    relay.drain();
    loseMarks();
    relay.drain();
    ev.equal(Map.of("APPLIED", 3, "DUPLICATE", 3), stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"),
        "dedup on: APPLIED=3, DUPLICATE=3");
    ev.equal(3L, shipped(), "dedup on: 3 orders shipped 3 times");

    FulfillmentConsumer.dedup = false;
    loseMarks();
    relay.drain();
    FulfillmentConsumer.dedup = true;
    long shipped = shipped();
    ev.note("dedup off: ship counts " + stack.sql.histogram("SELECT ship_count::text FROM fulfillment.fulfillment"));
    ev.equal(6L, shipped, "dedup off: the same redelivery ships 3 orders 6 times");
    ev.check(stack.sql.count("SELECT count(*) FROM fulfillment.fulfillment WHERE ship_count > 1") == 3,
        "damage visible: every order shipped more than once");
  }

  private static void loseMarks() {
    stack.db().read(c -> c.createStatement().executeUpdate("UPDATE outbox SET published_at = NULL"));
  }

  private static long shipped() {
    return stack.sql.count("SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment");
  }
}
