package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-11: the worker process running the activities (own JVM) is killed (SIGKILL) inside the success transaction — reservation confirmed,
 * order PAID and transition written, the outbox insert pending — before it commits. PostgreSQL
 * rolls the whole transaction back: the order is still UNKNOWN, the unit still HELD, no orphan
 * event. The next worker redoes the step once: one ORDER_PAID event.
 */
class C2911KilledInsideSuccessTxTest {
  // the success transaction must run in the killed process: database steps as activity tasks there,
  // not as local activities in the workflows' worker
  @RegisterExtension static final Stack stack = new Stack().with("workerActivities", false)
      .with("orders.unknownFirstQuery", "5m").with("orders.localDatabaseSteps", false);
  @RegisterExtension static final Evidence ev = new Evidence("C29-11", "SIGKILL inside the success transaction");

  @Test
  void killedInsideSuccessTransaction() throws Exception {
    stack.sku("sku-c2911", 5, 3);
    String id;
    // the charge must time out in this worker (a reply delayed past it): the short channel deadline
    try (ChildJvm first = ChildJvm.start("c2911-worker-1", stack.workerProperties(Stack.SHORT_CHANNEL_TIMEOUT_MS), "worker", "embedded.yml")) {
      first.awaitLog("worker polling", 60_000);
      HttpJson buyer = stack.api.login("t1", "user-1101");
      id = Buyers.create(buyer, "c2911", "sku-c2911", 1).text("order_id");
      Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
      ev.equal("UNKNOWN", Buyers.pay(buyer, id).text("status"), "order UNKNOWN");

      // hold the outbox: the success transaction will stop at its event insert, before commit
      try (Connection lock = stack.db().dataSource().getConnection()) {
        lock.setAutoCommit(false);
        lock.createStatement().execute("LOCK TABLE outbox IN SHARE MODE");
        stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
        stack.awaitBlockedOnLock("INSERT INTO outbox", 45_000); // a deadline for the notice to reach the worker, not a speed bound
        ev.note("STAGE success transaction open: confirm + PAID + transition written, outbox insert waiting");
        ev.equal("UNKNOWN", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id),
            "other sessions still see UNKNOWN");
        ev.equal(137, first.killHard(), "worker exit status 137 (SIGKILL)");
        lock.commit();
      }
    }
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'INSERT INTO outbox%'"
        + " AND state <> 'idle'") == 0, 15_000, "the killed worker's session did not end");
    ev.equal("UNKNOWN", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "rolled back: still UNKNOWN");
    ev.equal("HELD", stack.sql.text("SELECT status FROM reservation WHERE reservation_key = ?", id + "/r1"),
        "rolled back: reservation still HELD");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "no orphan event");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM order_transition WHERE order_id = ? AND to_status = 'PAID'", id),
        "no PAID transition");

    try (ChildJvm second = ChildJvm.start("c2911-worker-2", stack.workerProperties(), "worker", "embedded.yml")) {
      second.awaitLog("worker polling", 60_000);
      stack.skip(Duration.ofSeconds(16)); // the lost activity's start-to-close timeout; then it is retried
      stack.awaitStatus(id, "PAID", 30_000);
      ev.note("timeline " + id + ": " + stack.sql.timeline(id));
      ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "redone once: one event");
      ev.equal("PAID", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", id),
          "the notice's effect recorded once: PAID");
      String summary = stack.checkReconcileClean(ev, "reconcile clean");
    }
  }
}
