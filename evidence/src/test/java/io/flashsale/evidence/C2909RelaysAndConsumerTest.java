package io.flashsale.evidence;

import io.flashsale.persistence.Database;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.outbox.OutboxRelay;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-09: two relays drain 40 outbox events at once (FOR UPDATE SKIP LOCKED): the consumer
 * receives exactly 40, each once. A re-sent event is a DUPLICATE, an older version of an order
 * is STALE, and no order ships twice.
 */
class C2909RelaysAndConsumerTest {
  @RegisterExtension static final Stack stack = new Stack().with("relay.enabled", false);
  @RegisterExtension static final Evidence ev = new Evidence("C29-09", "two relays, 40 deliveries, DUPLICATE, STALE");

  @Test
  void twoRelaysDeliverEveryEventOnce() throws Exception {
    stack.sku("sku-c2909", 40, 3);
    HttpJson buyer = null;
    for (int i = 0; i < 40; i++) {
      if (i % 3 == 0) buyer = stack.api.login("t1", "user-09" + String.format("%02d", i));
      String id = Buyers.create(buyer, "c2909-" + i, "sku-c2909", 1).text("order_id");
      if (i % 2 == 0) Buyers.pay(buyer, id);
      else Buyers.cancel(buyer, id);
    }
    ev.equal(40L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "40 unpublished events");

    Database db = stack.db();
    String consumer = stack.wiring.consumer().url();
    OutboxRelay one = new OutboxRelay(db, consumer, 5, 50, "one");
    OutboxRelay two = new OutboxRelay(db, consumer, 5, 50, "two");
    ExecutorService pool = Executors.newFixedThreadPool(2);
    List<Future<?>> runs = List.of(pool.submit(one::drain), pool.submit(two::drain));
    for (Future<?> f : runs) f.get();
    pool.shutdown();
    ev.note("relay one delivered " + one.delivered() + ", relay two delivered " + two.delivered());
    ev.equal(40L, one.delivered() + two.delivered(), "the two relays delivered 40 together");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "every event published");
    ev.equal(40L, stack.sql.count("SELECT count(*) FROM fulfillment.ful_received"), "the consumer received exactly 40");
    ev.equal(Map.of("APPLIED", 40), stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"), "all 40 APPLIED");
    ev.equal(20L, stack.sql.count("SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment"), "20 PAID orders shipped");

    HttpJson consumerApi = new HttpJson(consumer.replace("/events", ""), null);
    long first = stack.sql.count("SELECT min(event_id) FROM outbox WHERE event_type = 'ORDER_PAID'");
    String paidOrder = stack.sql.text("SELECT order_id FROM outbox WHERE event_id = ?", first);
    HttpJson.Reply again = consumerApi.post("/events", Map.of("event_id", first, "order_id", paidOrder,
        "event_type", "ORDER_PAID", "order_version", 3, "payload", "{}"));
    ev.equal("DUPLICATE", again.text("effect"), "a re-sent event → DUPLICATE");
    HttpJson.Reply older = consumerApi.post("/events", Map.of("event_id", 1_000_000, "order_id", paidOrder,
        "event_type", "ORDER_PAID", "order_version", 2, "payload", "{}"));
    ev.equal("STALE", older.text("effect"), "an older version of the order → STALE");
    ev.equal(1L, stack.sql.count("SELECT ship_count FROM fulfillment.fulfillment WHERE order_id = ?", paidOrder),
        paidOrder + " shipped once");
    ev.equal(20L, stack.sql.count("SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment"),
        "ship count unchanged");
    ev.note("consumer effects " + stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"));
    String summary = stack.checkReconcileClean(ev, "reconcile clean");
  }
}
