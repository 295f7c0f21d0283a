package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the service is stopped (as Ctrl-C does) and started again on the same data folder, with
 * the dev server keeping its state in a file. Every order is still there, each non-final order
 * still has its own workflow run (nothing needed repair), the bank's ledger is unchanged, a
 * CREATED order still expires at its deadline and an UNKNOWN one still converges by query.
 */
@Tag("dev-server-only")
class X08RestartKeepsEverythingTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline()
      .with("temporal.devServerDbFile", "") // the default: <dataDir>/temporal.db
      .with("orders.reservationTtl", "25s")
      .with("orders.unknownFirstQuery", "15s");
  @RegisterExtension static final Evidence ev = new Evidence("X-08", "restart keeps orders, workflows, timers, ledger");

  @Test
  void restartKeepsEverything() throws Exception {
    stack.sku("sku-x08", 10, 3);
    HttpJson buyer = stack.api.login("t1", "user-0801");
    String created = Buyers.create(buyer, "x08-a", "sku-x08", 1).text("order_id");
    String paid = Buyers.create(buyer, "x08-b", "sku-x08", 1).text("order_id");
    String unknown = Buyers.create(buyer, "x08-c", "sku-x08", 1).text("order_id");
    ev.equal("PAID", Buyers.pay(buyer, paid).text("status"), "one order PAID before the restart");
    Buyers.fault(stack.channel, unknown, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(buyer, unknown).text("status"), "one order UNKNOWN before the restart");

    String rowsBefore = rows();
    String ledgerBefore = stack.channel.get("/statement").body().path("rows").toString();
    String runCreated = runId(created);
    String runUnknown = runId(unknown);
    java.nio.file.Path data = stack.dataDir();
    ev.note("data folder " + data.getFileName() + ": " + List.of(data.toFile().list()));
    long stoppedAt = System.currentTimeMillis();
    stack.stop();
    ev.note("STAGE stopped; starting again on the same data folder");
    stack.start();
    long restartedAt = System.currentTimeMillis();
    ev.note("restart took " + (restartedAt - stoppedAt) + " ms");

    ev.equal(rowsBefore, rows(), "every order row unchanged by the restart");
    ev.equal(ledgerBefore, stack.channel.get("/statement").body().path("rows").toString(),
        "the channel's ledger unchanged (its own file)");
    ev.equal("RUNNING", stack.workflowStatus(stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", created)),
        "the CREATED order's workflow is still running");
    ev.equal(runCreated, runId(created), "same workflow run (kept by the engine, not repaired)");
    ev.equal(runUnknown, runId(unknown), "same workflow run for the UNKNOWN order");
    String repair = stack.admin.post("/tasks/reconcile?repair=true", null).raw();
    ev.check(repair.contains("repaired=0"), "nothing needed repair");

    stack.awaitStatus(unknown, "PAID", 40_000);
    ev.note("timeline " + unknown + ": " + stack.sql.timeline(unknown));
    ev.check(stack.sql.timeline(unknown).endsWith("[UNKNOWN->PAID v4 query]"), "UNKNOWN converged by query after the restart");

    long deadline = stack.sql.count("SELECT (extract(epoch FROM expires_at) * 1000)::bigint FROM reservation"
        + " WHERE reservation_key = ?", created + "/r1");
    stack.awaitStatus(created, "CANCELLED", 60_000);
    long cancelledAt = stack.sql.count("SELECT (extract(epoch FROM at) * 1000)::bigint FROM order_transition"
        + " WHERE order_id = ? AND to_status = 'CANCELLED'", created);
    ev.note("CREATED order expired " + (cancelledAt - deadline) + " ms after its stored deadline");
    // a deadline that passed while the service was down fires right after the restart
    ev.check(cancelledAt >= deadline - 1_000 && cancelledAt <= Math.max(deadline, restartedAt) + 15_000,
        "the CREATED order expired on time (its timer survived the restart)");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", unknown), "one ORDER_PAID event");
    stack.checkReconcileClean(ev, "reconcile clean after the restart");
  }

  private static String rows() {
    return String.join(" ", stack.sql.column(
        "SELECT order_id || ':' || status || ':v' || version FROM orders ORDER BY order_id"));
  }

  private static String runId(String orderId) {
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
    return stack.wiring.temporal().service().blockingStub().describeWorkflowExecution(
            io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest.newBuilder().setNamespace("default")
                .setExecution(io.temporal.api.common.v1.WorkflowExecution.newBuilder().setWorkflowId(workflowId))
                .build())
        .getWorkflowExecutionInfo().getExecution().getRunId();
  }
}
