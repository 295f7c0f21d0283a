package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.outbox.OutboxRelay;
import java.sql.Connection;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-12: a relay in its own JVM delivers 3 events, the consumer acknowledges all 3, and the
 * relay is killed (SIGKILL) before it commits "published". The marks roll back, the 3 events are
 * delivered again by the next relay: the consumer records APPLIED=3, DUPLICATE=3, and each order
 * ships once. At-least-once delivery, exactly-once effect.
 */
class C2912RelayKilledAfterAcksTest {
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
    ev.equal(3L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "3 unpublished events");

    String consumer = stack.wiring.consumer().url();
    try (Connection lock = stack.db().dataSource().getConnection()) {
      lock.setAutoCommit(false);
      lock.createStatement().execute("LOCK TABLE outbox IN SHARE MODE"); // lets the claim through, holds the marks
      try (ChildJvm relay = ChildJvm.start("c2912-relay", Map.of(), "relay", "--database-url", stack.wiring.jdbcUrl(),
          "--consumer-url", consumer, "--batch", "10", "--name", "child")) {
        stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM fulfillment.ful_received") == 3, 60_000,
            "consumer did not acknowledge 3");
        stack.awaitBlockedOnLock("UPDATE outbox", 15_000);
        ev.note("STAGE consumer acknowledged 3, relay pid " + relay.pid() + " about to mark them published");
        ev.equal(137, relay.killHard(), "relay exit status 137 (SIGKILL)");
      }
      lock.commit();
    }
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'UPDATE outbox%'"
        + " AND state <> 'idle'") == 0, 15_000, "the killed relay's session did not end");
    ev.equal(3L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "the marks rolled back: 3 unpublished");

    OutboxRelay restarted = new OutboxRelay(stack.db(), consumer, 10, 50, "restarted");
    restarted.drain();
    ev.equal(3L, restarted.delivered(), "the restarted relay delivered the 3 again");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "all published now");
    ev.equal(Map.of("APPLIED", 3, "DUPLICATE", 3), stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"),
        "consumer effects APPLIED=3, DUPLICATE=3");
    ev.equal(Map.of("1", 3), stack.sql.histogram("SELECT ship_count::text FROM fulfillment.fulfillment"),
        "each order shipped once");
  }
}
