package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.workflows.OrderSettings;
import io.flashsale.workflows.OrderStart;
import io.flashsale.workflows.OrderWorkflow;
import io.flashsale.workflows.WorkflowIds;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * a cancel request for an order's workflow (what {@code temporal workflow cancel} sends; the
 * CLI itself on the dev server). A CREATED order is cancelled and its unit released; an UNKNOWN
 * order is not abandoned: its run stays until the query converged it (PAID), then ends as
 * cancelled. A run whose create never came ends by itself after one reservation TTL (20 s here),
 * and a CREATED order left alone expires.
 */
class X19WorkflowCancelTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline()
      .with("orders.reservationTtl", "20s")
      .with("orders.unknownFirstQuery", "5s");
  @RegisterExtension static final Evidence ev = new Evidence("X-19", "workflow cancel settles the order; no-create runs end");

  private static final String SKU = "sku-x19";

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  private static String status(String orderId) {
    return stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId);
  }

  /** The operator's cancel: the temporal CLI on the dev server, the same request by client on the in-memory engine. */
  private static void cancelRun(String workflowId) throws Exception {
    if (stack.devServer()) {
      TemporalCliProcess.Result r = TemporalCliProcess.run(stack, "workflow", "cancel", "--workflow-id", workflowId);
      ev.note("temporal workflow cancel --workflow-id " + workflowId + " → exit " + r.exit());
      ev.equal(0, r.exit(), "the CLI accepted the cancel (" + r.output() + ")");
    } else {
      stack.wiring.temporal().client().newUntypedWorkflowStub(workflowId).cancel();
    }
  }

  @Test
  void cancelRequestsSettleTheOrder() throws Exception {
    stack.sku(SKU, 5, 3);
    long t0 = System.currentTimeMillis();
    // a run started without its create update (by hand): it must not wait forever
    String lonely = "order:t1:user-1909:x19-lonely";
    OrderWorkflow lonelyRun = stack.wiring.temporal().client().newWorkflowStub(OrderWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(lonely).setTaskQueue(WorkflowIds.TASK_QUEUE).build());
    WorkflowClient.start(lonelyRun::run, new OrderStart("t1", "user-1909", "x19-lonely", null,
        new OrderSettings(20_000, 5_000, 60_000, 600_000, 4_000)));
    HttpJson dave = stack.api.login("t1", "user-1904");
    String expiring = Buyers.create(dave, "x19-d", SKU, 1).text("order_id");

    // 1. CREATED
    HttpJson alice = stack.api.login("t1", "user-1901");
    String a = Buyers.create(alice, "x19-a", SKU, 1).text("order_id");
    cancelRun(workflowId(a));
    stack.awaitStatus(a, "CANCELLED", 15_000);
    stack.awaitTrue(() -> stack.workflowStatus(workflowId(a)).equals("CANCELED"), 15_000, "A's run did not end");
    String ta = stack.sql.timeline(a);
    ev.note("timeline " + a + ": " + ta);
    ev.check(ta.endsWith("[CREATED->CANCELLED v2 workflow cancelled]"), "A: CREATED → CANCELLED by the cancel request");
    ev.equal("RELEASED", stack.sql.text("SELECT status FROM reservation WHERE reservation_key = ?", a + "/r1"),
        "A's unit released");
    ev.equal("CANCELED", stack.workflowStatus(workflowId(a)), "A's run ended as cancelled");
    stack.recordHistory(a, "x19-workflow-cancel-created");

    // 2. UNKNOWN: the charge happened, its reply was lost
    HttpJson bob = stack.api.login("t1", "user-1902");
    String b = Buyers.create(bob, "x19-b", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, b, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(bob, b).text("status"), "B is UNKNOWN (reply lost)");
    cancelRun(workflowId(b));
    Thread.sleep(1_000);
    ev.equal("UNKNOWN", status(b), "B still UNKNOWN right after the cancel request");
    ev.equal("RUNNING", stack.workflowStatus(workflowId(b)), "B's run is not abandoned");
    stack.awaitStatus(b, "PAID", 30_000);
    stack.awaitTrue(() -> stack.workflowStatus(workflowId(b)).equals("CANCELED"), 15_000, "B's run did not end");
    String tb = stack.sql.timeline(b);
    ev.note("timeline " + b + ": " + tb);
    ev.check(tb.contains("[UNKNOWN->PAID v4 query"), "B converged by query to PAID before its run ended");
    ev.equal(1, Buyers.chargeRequests(stack.channel, b), "one charge at the channel");
    ev.equal("CANCELED", stack.workflowStatus(workflowId(b)), "then the run ended as cancelled");
    stack.recordHistory(b, "x19-workflow-cancel-unknown-converged");
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", b, "order", "fifo"));

    // 3. the run without create, 4. the CREATED order nobody paid
    long waited = System.currentTimeMillis() - t0;
    if (waited < 21_000) stack.skip(Duration.ofMillis(21_000 - waited));
    stack.awaitTrue(() -> stack.workflowStatus(lonely).equals("COMPLETED"), 30_000, "the run without create did not end");
    ev.equal("COMPLETED", stack.workflowStatus(lonely), "a run whose create never came ended by itself after the TTL");
    writeHistory(lonely, "x19-no-create-ends");
    stack.awaitStatus(expiring, "CANCELLED", 30_000);
    String td = stack.sql.timeline(expiring);
    ev.note("timeline " + expiring + ": " + td);
    ev.check(td.endsWith("[CREATED->CANCELLED v2 reservation expired]"), "an unpaid CREATED order expired");
    // it never reached the channel: its run ends at once, not after the 10 min late-notice window
    String expiringRun = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", expiring);
    long cancelledAt = System.currentTimeMillis();
    stack.awaitTrue(() -> stack.workflowStatus(expiringRun).equals("COMPLETED"), 30_000,
        "the expired order's run did not end");
    ev.note("the expired order's run completed " + (System.currentTimeMillis() - cancelledAt)
        + " ms after the order was seen CANCELLED (late-notice window 600000 ms)");
    ev.equal("COMPLETED", stack.workflowStatus(expiringRun), "an order that never reached the channel ends its run at once");
    stack.recordHistory(expiring, "x19-created-expired-ended");
    stack.awaitNoticesApplied(1, 15_000);
    stack.awaitNothingPending(10_000);
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static void writeHistory(String workflowId, String name) throws java.io.IOException {
    java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("histories.dir", "target/histories"));
    java.nio.file.Files.createDirectories(dir);
    java.nio.file.Files.writeString(dir.resolve(name + ".json"),
        stack.wiring.temporal().client().fetchHistory(workflowId).toJson(true));
  }
}
