package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * WF-01: a long-lived order keeps a bounded history. 150 late declines (150 notify ids) for one
 * declined order (FAILED, whose run stays open for late notices; a PAID order's run ends at once)
 * with continue-as-new set at 100 events: the workflow continues as new (a new run that reloads the
 * order), no notice is lost or applied twice, and the order still answers commands.
 */
class CallbackStormContinueAsNewTest {
  @RegisterExtension static final Stack stack = new Stack().with("orders.continueAsNewAfterEvents", 100);
  @RegisterExtension static final Evidence ev = new Evidence("WF-01", "callback storm: continue-as-new loses nothing");

  private static WorkflowExecutionInfo describe(String workflowId) {
    return stack.wiring.temporal().service().blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder().setNamespace("default")
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId)).build()).getWorkflowExecutionInfo();
  }

  @Test
  void stormContinuesAsNew() throws Exception {
    stack.sku("sku-wf01", 5, 3);
    HttpJson a = stack.api.login("t1", "user-wf01");
    String id = Buyers.create(a, "wf01", "sku-wf01", 1).text("order_id");
    Buyers.fault(stack.channel, id, Map.of("decline", true));
    ev.equal("FAILED", Buyers.pay(a, id).text("status"), "order FAILED: the channel declined it");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Integer>> sent = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      int n = i;
      // distinct notices of a decline: only the workflow answers a notice for a FAILED order, so every one wakes it
      sent.add(pool.submit(() -> stack.callback(Map.of("notify_id", "ntf-storm-" + n,
          "merchant_order", id, "kind", "DECLINED", "amount", 1990, "txn", "txn-storm-" + n)).status()));
    }
    int ok = 0;
    for (Future<Integer> f : sent) ok += f.get() == 200 ? 1 : 0;
    pool.shutdown();
    ev.equal(150, ok, "150 callbacks accepted");
    stack.awaitNoticesApplied(151, 30_000);
    Map<String, Integer> effects = stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE merchant_order = ?", id);
    ev.note("effects: " + effects + " (the channel's own notice of the decline may settle the order before the reply)");
    ev.equal(151, effects.values().stream().mapToInt(Integer::intValue).sum(), "every arrival has its effect, none lost");
    ev.check(effects.getOrDefault("DUPLICATE FAILED", 0) >= 150, "every storm notice applied as DUPLICATE FAILED");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ? AND event_type = 'ORDER_FAILED'", id),
        "still one ORDER_FAILED event");

    String wf = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", id);
    // the last notice's effect is committed before the workflow sees its result and continues as new
    stack.awaitTrue(() -> {
      WorkflowExecutionInfo i = describe(wf);
      return !i.getFirstRunId().equals(i.getExecution().getRunId());
    }, 15_000, "no continue-as-new");
    WorkflowExecutionInfo info = describe(wf);
    ev.note("current run history length " + info.getHistoryLength() + ", first run " + info.getFirstRunId()
        + ", current run " + info.getExecution().getRunId());
    ev.check(!info.getFirstRunId().equals(info.getExecution().getRunId()), "the workflow continued as new");
    ev.check(info.getHistoryLength() < 400, "the current run's history stays bounded");
    java.util.List<String> timeline = stack.wiring.temporal().client()
        .newWorkflowStub(io.flashsale.workflows.OrderWorkflow.class, wf).status().timeline();
    ev.note("status query timeline in the new run: " + timeline);
    ev.equal(3, timeline.size(), "the new run's status query still shows the whole timeline");
    HttpJson.Reply pay = Buyers.pay(a, id);
    ev.check(pay.status() == 409 && "FAILED".equals(pay.text("status")), "the new run answers commands: pay → REJECTED FAILED");
    stack.recordHistory(id, "wf01-run-after-continue-as-new");
    String summary = stack.checkReconcileClean(ev, "reconcile clean (workflow agrees)");
  }
}
