package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the success transaction of a paid order commits, and its acknowledgement is lost: the
 * worker running the database steps (own JVM) reaches PostgreSQL through a proxy that drops the
 * server's COMMIT reply and cuts the connection. The step fails with an I/O error although its
 * transaction is committed; Temporal retries it, and the retry finds the order PAID and applies
 * nothing again: one PAID transition, one confirmed unit, one ORDER_PAID event, one charge, and
 * the late callback is a duplicate.
 */
class X02LostCommitAckTest {
  // the database steps run as activity tasks in the child worker, whose pool goes through the proxy
  @RegisterExtension static final Stack stack = new Stack().with("workerActivities", false)
      .with("orders.localDatabaseSteps", false);
  @RegisterExtension static final Evidence ev = new Evidence("X-02", "commit acknowledgement lost: the retry finds the commit, applies nothing twice");

  private static final String SKU = "sku-x02";

  /** Started attempts of the applyChannelAnswer activity, as the server counts them. */
  private static int applyAttempts(List<HistoryEvent> events) {
    int attempts = 0;
    for (HistoryEvent e : events) {
      if (e.getEventType() != EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
          || !e.getActivityTaskScheduledEventAttributes().getActivityType().getName().equals("ApplyChannelAnswer")) {
        continue;
      }
      for (HistoryEvent s : events) {
        if (s.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
            && s.getActivityTaskStartedEventAttributes().getScheduledEventId() == e.getEventId()) {
          attempts = Math.max(attempts, s.getActivityTaskStartedEventAttributes().getAttempt());
        }
      }
    }
    return attempts;
  }

  @Test
  void lostCommitAcknowledgement() throws Exception {
    stack.sku(SKU, 5, 3);
    int pgPort = Integer.parseInt(stack.wiring.jdbcUrl().replaceFirst("^jdbc:postgresql://[^:/]+:(\\d+)/.*$", "$1"));
    try (CommitAckCutter cutter = new CommitAckCutter(pgPort)) {
      Map<String, String> props = stack.workerProperties();
      props.put("dw.database.url", stack.wiring.jdbcUrl().replaceFirst(":" + pgPort + "/", ":" + cutter.port() + "/"));
      try (ChildJvm worker = ChildJvm.start("x02-worker", props, "worker", "embedded.yml")) {
        worker.awaitLog("worker polling", 90_000);
        HttpJson buyer = stack.api.login("t1", "user-x02");
        HttpJson.Reply created = Buyers.create(buyer, "x02", SKU, 1);
        ev.equal(201, created.status(), "created through the proxied worker");
        String id = created.text("order_id");
        Buyers.fault(stack.channel, id, Map.of("hold_callbacks", true)); // the charge reply alone settles it
        cutter.arm(id);
        ev.note("the proxy (port " + cutter.port() + " → PostgreSQL " + pgPort + ") will drop the COMMIT reply of "
            + id + "'s success transaction");

        HttpJson.Reply pay = Buyers.pay(buyer, id);
        ev.note("pay answered " + pay.status() + " " + pay.raw());
        ev.equal(1, cutter.cuts(), "one COMMIT acknowledgement was dropped and its connection cut");
        ev.check(pay.status() == 200 && "PAID".equals(pay.text("status")), "the pay answers 200 PAID");
        stack.awaitStatus(id, "PAID", 30_000);
        String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", id);
        int attempts = applyAttempts(Histories.of(stack, workflowId));
        ev.note("attempts of the activity that applied the charge reply: " + attempts);
        ev.check(attempts >= 2, "the step whose acknowledgement was lost was retried (" + attempts + " attempts)");
        ev.check(worker.logContains("An I/O error occurred while sending to the backend")
            && worker.logContains("PgConnection.commit("), "the worker saw the cut as an I/O error on commit");
        String timeline = stack.sql.timeline(id);
        ev.note("timeline " + id + ": " + timeline);
        ev.equal("[-->CREATED v1 create] [CREATED->PAYING v2 pay] [PAYING->PAID v3 charge reply]", timeline,
            "exactly one transition to PAID (v3), nothing after it");
        ev.equal(1L, stack.sql.count("SELECT count(*) FROM order_transition WHERE order_id = ? AND to_status = 'PAID'", id),
            "one PAID transition");
        ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "one ORDER_PAID event");
        ev.equal(1L, stack.sql.count("SELECT count(*) FROM reservation WHERE reservation_key LIKE ? AND status = 'CONFIRMED'",
            id + "/%"), "one confirmed reservation");
        ev.equal(4, stack.sql.remaining(SKU), "one unit taken");
        ev.equal(1, Buyers.chargeRequests(stack.channel, id), "one charge request");

        stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
        stack.awaitNoticesApplied(1, 30_000);
        ev.equal("DUPLICATE PAID", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", id),
            "the channel's callback is recorded once, as a duplicate");
        ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "still one event");
        stack.awaitNothingPending(15_000);
        stack.checkReconcileClean(ev, "reconcile clean");
      }
    }
  }
}
