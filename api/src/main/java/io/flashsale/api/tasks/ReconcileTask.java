package io.flashsale.api.tasks;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.servlets.tasks.Task;
import io.flashsale.activities.Reconciler;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** POST /tasks/reconcile[?format=json] : the report, last line the summary (SPEC §10). */
public class ReconcileTask extends Task {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Reconciler reconciler;
  private final Reconciler.WorkflowCheck workflows;

  public ReconcileTask(Reconciler reconciler, Reconciler.WorkflowCheck workflows) {
    super("reconcile");
    this.reconciler = reconciler;
    this.workflows = workflows;
  }

  @Override
  public void execute(Map<String, List<String>> params, PrintWriter out) throws Exception {
    Reconciler.Report r = reconciler.run(workflows);
    if ("json".equals(SkuTask.one(params, "format", "text"))) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("classes", r.classes());
      body.put("mismatches", r.mismatches());
      body.put("pending", r.pending());
      body.put("channel_net", r.channelNet());
      body.put("paid_sum", r.paidSum());
      body.put("confirmed", r.confirmed());
      body.put("paid", r.paid());
      body.put("drift", r.drift());
      body.put("summary", r.summaryLine());
      out.println(JSON.writeValueAsString(body));
    } else {
      out.print(r.text());
    }
  }
}
