package io.flashsale.api.tasks;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.reconciliation.ReconcileSchedule;
import io.flashsale.workflows.ReconcileWorkflow;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * POST /tasks/trigger-reconcile-schedule : one action of the reconcile schedule now (repair, then
 * the report; docs/DESIGN.md §Reconciliation on a schedule). 202 with the schedule's id: the run
 * is the engine's, its outcome lands in its memo and in the schedule's recent actions. Under the
 * schedule's overlap policy (SKIP): while a run is running the trigger is skipped. 409
 * SCHEDULE_OFF when this service has no schedule (interval 0, or the in-memory engine); 404
 * SCHEDULE_NOT_FOUND when the engine has none (deleted by an operator; a restart creates it again).
 */
public class TriggerReconcileScheduleTask extends AdminTask {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ReconcileSchedule schedule;
  private final String offReason;

  /** @param schedule null when off, {@code offReason} then says why */
  public TriggerReconcileScheduleTask(ReconcileSchedule schedule, String offReason) {
    super("trigger-reconcile-schedule", Set.of());
    this.schedule = schedule;
    this.offReason = offReason;
  }

  @Override
  protected int successStatus() {
    return 202;
  }

  @Override
  protected void run(TaskParams params, PrintWriter out) throws Exception {
    if (schedule == null) {
      throw new TaskError(409, "SCHEDULE_OFF", null, "the reconcile schedule is off here: " + offReason
          + "; POST /tasks/reconcile?repair=true runs it synchronously");
    }
    try {
      schedule.trigger();
    } catch (RuntimeException e) {
      if (!ReconcileSchedule.notFound(e)) throw e;
      throw new TaskError(404, "SCHEDULE_NOT_FOUND", null, "the engine has no schedule "
          + ReconcileWorkflow.SCHEDULE_ID + "; the service creates it at its next start");
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("schedule_id", ReconcileWorkflow.SCHEDULE_ID);
    body.put("triggered", true);
    body.put("overlap", "SKIP");
    out.println(JSON.writeValueAsString(body));
  }
}
