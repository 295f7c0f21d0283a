package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.workflows.OrderWorkflow;
import java.sql.Connection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-19 (negative control): a real dual write. The worker process that runs the activities (own
 * JVM) has the safeguard PAID_EVENT_IN_SAME_TX switched off: a success commits PAID in one
 * transaction and writes ORDER_PAID in a second one afterwards. The process is killed (SIGKILL)
 * between the two, while the test holds the outbox so the second write waits. PAID is committed,
 * the event is gone for good (the next worker's retry finds the order PAID and moves nothing).
 * The three-way reconciliation cannot see it (channel, order and reservation agree); the
 * event-integrity check does: PAID_WITHOUT_EVENT. With the safeguard on, the event is in the
 * success transaction and a kill there rolls back both (C29-11).
 */
class C2919EventIntegrityTest {
  // as C29-11: the success transaction runs in the killed process (database steps as activity
  // tasks there, not local activities in the workflows' worker)
  @RegisterExtension static final Stack stack = new Stack().with("relay.enabled", false).with("workerActivities", false)
      .with("orders.localDatabaseSteps", false);
  @RegisterExtension static final Evidence ev = new Evidence("C29-19", "negative control: dual write without outbox");

  @Test
  void workerKilledBetweenTheTwoWrites() throws Exception {
    stack.sku("sku-c2919", 5, 3);
    // the stack's channel deadline, which a cold worker JVM's charge meets: its own reply makes the order PAID
    try (ChildJvm first = ChildJvm.startMain("c2919-worker-1", WorkerWithoutSafeguard.class.getName(),
        stack.workerProperties(), "PAID_EVENT_IN_SAME_TX", "worker", "embedded.yml")) {
      first.awaitLog("worker polling", 60_000);
      ev.check(first.logContains("safeguard PAID_EVENT_IN_SAME_TX switched off"), "the worker JVM does the dual write");
      HttpJson buyer = stack.api.login("t1", "user-1901");
      String id = Buyers.create(buyer, "c2919", "sku-c2919", 1).text("order_id");
      Buyers.fault(stack.channel, id, Map.of("hold_callbacks", true)); // the CHARGED callback stays out of the way

      // hold the outbox: the first write (PAID) commits, the second (the event) waits for the lock
      try (Connection lock = stack.db().dataSource().getConnection()) {
        lock.setAutoCommit(false);
        lock.createStatement().execute("LOCK TABLE outbox IN SHARE MODE");
        CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, id));
        stack.awaitBlockedOnLock("INSERT INTO outbox", 30_000);
        ev.equal("PAID", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id),
            "the first write is committed: other sessions see PAID");
        ev.equal("CONFIRMED", stack.sql.text("SELECT status FROM reservation WHERE reservation_key = ?", id + "/r1"),
            "and the reservation CONFIRMED");
        ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id),
            "the second write (the event) has not happened");
        // the next worker starts while the window is held (the step in flight stays with the first)
        try (ChildJvm second = ChildJvm.start("c2919-worker-2", stack.workerProperties(), "worker",
            "embedded.yml")) {
          second.awaitLog("worker polling", 60_000);
          ev.note("STAGE PAID committed, event insert waiting in a second transaction; worker pid " + first.pid()
              + " killed");
          ev.equal(137, first.killHard(), "worker exit status 137 (SIGKILL)");
          lock.commit();
          stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM pg_stat_activity WHERE query LIKE"
              + " 'INSERT INTO outbox%' AND state <> 'idle'") == 0, 15_000, "the killed worker's session did not end");
          ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id),
              "the event died with the process");

          // the lost step's start-to-close timeout (15 s) passes, then the second worker retries it
          if (!stack.devServer()) stack.skip(Duration.ofSeconds(16));
          String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", id);
          stack.awaitTrue(() -> "PAID".equals(workflowView(workflowId)), 45_000, "the workflow did not learn PAID");
          String timeline = stack.sql.timeline(id);
          ev.note("timeline " + id + ": " + timeline);
          ev.check(timeline.endsWith("[PAYING->PAID v3 charge reply]"), "PAID once, by the charge's reply");
          ev.note("pay answered " + pay.get().status() + " " + pay.get().raw());
          ev.equal(1, Buyers.chargeRequests(stack.channel, id), "one charge request");
          ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id),
              "the retry found the order PAID: the event is lost for good");

          String report = stack.reconcile();
          ev.note("report:\n" + report.trim());
          String summary = report.trim().lines().reduce((x, y) -> y).orElse("");
          ev.check(summary.contains(" pending=0 ")
                  && summary.contains("channel_net=1990 paid_sum=1990 confirmed=1 paid=1 drift=0"),
              "channel, orders and reservations still agree");
          ev.check(report.contains("mismatch " + id + " PAID PAID_WITHOUT_EVENT charged=1990 refunded=0"
              + " reservation=CONFIRMED"), "caught per order: PAID_WITHOUT_EVENT, and only that");
          ev.check(report.contains("GLOBAL PAID orders without ORDER_PAID outbox event: 1"),
              "caught: PAID without ORDER_PAID event");
          ev.check(summary.contains(" mismatches=2 "), "nothing else is flagged (the workflow agrees with the row)");
        }
      }
    }
  }

  private static String workflowView(String workflowId) {
    try {
      var state = stack.wiring.temporal().client().newWorkflowStub(OrderWorkflow.class, workflowId).status();
      return state.order() == null ? null : state.order().status().name();
    } catch (RuntimeException notYet) {
      return null;
    }
  }
}
