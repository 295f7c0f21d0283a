package io.flashsale.api.tasks;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.reconciliation.Reconciler;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * POST /tasks/reconcile[?format=json][&amp;repair=true] : the report, last line the summary. With
 * repair, every non-final order without a running workflow first gets one, and the report lists
 * what was repaired.
 */
public class ReconcileTask extends AdminTask {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Reconciler reconciler;
  private final Reconciler.WorkflowCheck workflows;
  private final io.flashsale.reconciliation.OrphanRepair repair;

  public ReconcileTask(Reconciler reconciler, Reconciler.WorkflowCheck workflows,
      io.flashsale.reconciliation.OrphanRepair repair) {
    super("reconcile", Set.of("format", "repair"));
    this.reconciler = reconciler;
    this.workflows = workflows;
    this.repair = repair;
  }

  // one report at a time: the workflow audit takes one visibility listing per report
  @Override
  protected synchronized void run(TaskParams params, PrintWriter out) throws Exception {
    String repairParam = params.choice("repair", "false", Set.of("true", "false"));
    String format = params.choice("format", "text", Set.of("text", "json"));
    List<io.flashsale.reconciliation.OrphanRepair.Repaired> repaired =
        repairParam.equals("true") ? repair.run() : List.of();
    repair.awaitLoaded(repaired, java.time.Duration.ofSeconds(15));
    Reconciler.Report r;
    try {
      r = reconciler.run(workflows);
    } catch (java.io.IOException channelDown) {
      // the report needs the channel's statement: a dependency that does not answer, not a bug
      throw new TaskError(503, "CHANNEL_UNAVAILABLE", null,
          "the payment channel's statement could not be read; retry when the channel answers");
    }
    if (format.equals("json")) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("repaired", repaired.stream().map(io.flashsale.reconciliation.OrphanRepair.Repaired::line).toList());
      body.put("classes", r.classes());
      body.put("mismatches", r.mismatches());
      body.put("pending", r.pending());
      body.put("pending_sum", r.pendingSum());
      body.put("pending_aged", r.pendingAged());
      body.put("attention", r.attention());
      body.put("channel_net", r.channelNet());
      body.put("paid_sum", r.paidSum());
      body.put("confirmed", r.confirmed());
      body.put("paid", r.paid());
      body.put("drift", r.drift());
      body.put("summary", r.summaryLine());
      out.println(JSON.writeValueAsString(body));
    } else {
      for (var x : repaired) out.println(x.line());
      if (repairParam.equals("true")) out.println("repaired=" + repaired.size());
      out.print(r.text());
    }
  }
}
