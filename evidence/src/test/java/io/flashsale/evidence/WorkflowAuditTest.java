package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * RC-01: the checks only the engine can answer. A row changed behind its workflow's back is a
 * WORKFLOW_MISMATCH; a non-final order whose workflow is gone is an ORPHAN (nothing would ever
 * converge or expire it). Both found by describe + query, per order.
 */
class WorkflowAuditTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("RC-01", "reconcile: workflow vs row, orphans");

  @Test
  void workflowAndRowAreCompared() throws Exception {
    stack.sku("sku-rc01", 5, 3);
    HttpJson a = stack.api.login("t1", "user-rc01");
    // a declined order: FAILED, its run open for late notices (a PAID order's run ends at once, and
    // the audit compares only running workflows)
    String declined = Buyers.create(a, "rc01-a", "sku-rc01", 1).text("order_id");
    Buyers.fault(stack.channel, declined, java.util.Map.of("decline", true));
    ev.equal("FAILED", Buyers.pay(a, declined).text("status"), "the declined order is FAILED");
    String orphan = Buyers.create(a, "rc01-b", "sku-rc01", 1).text("order_id");
    stack.awaitNoticesApplied(1, 10_000);
    ev.check(stack.reconcileSummary().contains(" mismatches=0 "), "clean to begin with");

    // a status write that bypassed the workflow (and the transition function)
    stack.db().read(c -> c.createStatement().executeUpdate(
        "UPDATE orders SET version = version + 1 WHERE order_id = '" + declined + "'"));
    // a non-final order whose workflow was terminated by hand
    String wf = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orphan);
    stack.wiring.temporal().client().newUntypedWorkflowStub(wf).terminate("audit experiment");
    stack.awaitTrue(() -> stack.workflowStatus(wf).equals("TERMINATED"), 10_000, "workflow not terminated");

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains(declined + " FAILED WORKFLOW_MISMATCH workflow=FAILED v3 row=FAILED v4"), "caught: WORKFLOW_MISMATCH");
    ev.check(report.contains(orphan + " CREATED ORPHAN workflow TERMINATED"), "caught: ORPHAN");
  }
}
