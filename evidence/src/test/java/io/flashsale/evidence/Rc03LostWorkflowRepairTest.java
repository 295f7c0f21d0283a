package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * RC-03: a workflow lost mid-payment (terminated by hand while its charge is in flight). The
 * order is PAYING with nothing to converge it: reconciliation reports it as an ORPHAN; with
 * repair, it gets a new run that loads it, takes the lost charge answer as no answer (UNKNOWN)
 * and converges by query to PAID, with the one charge the channel made. Reconcile is then clean.
 */
class Rc03LostWorkflowRepairTest {
  @RegisterExtension static final Stack stack = new Stack()
      .with("channel.timeout", "5s") // the charge stays in flight long enough to lose its workflow
      .with("orders.unknownFirstQuery", "1s");
  @RegisterExtension static final Evidence ev = new Evidence("RC-03", "workflow lost mid-payment → ORPHAN → repair → PAID");

  @Test
  void lostWorkflowIsRepaired() throws Exception {
    stack.sku("sku-rc03", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-0301");
    String id = Buyers.create(buyer, "rc03", "sku-rc03", 1).text("order_id");
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", id);
    Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", 4_000, "hold_callbacks", true));
    CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, id));
    stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, id) == 1, 15_000, "charge never reached the channel");
    stack.wiring.temporal().client().newUntypedWorkflowStub(workflowId).terminate("lost by hand (RC-03)");
    ev.note("STAGE charge in flight; workflow " + workflowId + " terminated; pay answered " + pay.get().status());
    ev.equal("PAYING", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "the order is left PAYING");
    ev.equal("TERMINATED", stack.workflowStatus(workflowId), "no running workflow");

    String report = stack.reconcile();
    ev.note("reconcile: " + report.trim().replace("\n", " | "));
    ev.check(report.contains("mismatch " + id + " PAYING ORPHAN workflow TERMINATED"), "reconcile reports the orphan");
    String repaired = stack.admin.post("/tasks/reconcile?repair=true", null).raw();
    ev.note("reconcile?repair=true: " + repaired.trim().replace("\n", " | "));
    ev.check(repaired.contains("repaired " + id + " PAYING") && repaired.contains("repaired=1"),
        "the repair starts a new run for it and reports it");

    stack.awaitStatus(id, "PAID", 30_000);
    String timeline = stack.sql.timeline(id);
    ev.note("timeline " + id + ": " + timeline);
    ev.check(timeline.endsWith("[PAYING->UNKNOWN v3 repair: charge answer lost] [UNKNOWN->PAID v4 query]"),
        "the new run took the lost answer as UNKNOWN and converged by query");
    // the repair's run made it PAID and ended (a PAID order's run ends at once): a new run, completed
    stack.awaitTrue(() -> "COMPLETED".equals(stack.workflowStatus(workflowId)), 15_000, "the repair's run did not end");
    ev.equal("COMPLETED", stack.workflowStatus(workflowId), "the repair's new run settled the order and completed");
    ev.equal(1, Buyers.chargeRequests(stack.channel, id), "exactly one charge request");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "one ORDER_PAID event");
    stack.recordHistory(id, "rc03-repaired-paying-paid");
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
    stack.awaitNoticesApplied(1, 15_000);
    stack.checkReconcileClean(ev, "reconcile clean after the repair");
  }
}
