package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.reconciliation.ReconcileSchedule;
import io.flashsale.workflows.ReconcileResult;
import io.flashsale.workflows.ReconcileWorkflow;
import io.temporal.api.enums.v1.ScheduleOverlapPolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.client.schedules.ScheduleActionExecutionStartWorkflow;
import io.temporal.client.schedules.ScheduleActionResult;
import io.temporal.client.schedules.ScheduleDescription;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * reconciliation with orphan repair on a Temporal Schedule. With a 5 s interval the service
 * creates the schedule flashsale-reconcile (overlap SKIP) at start. An order's workflow is
 * terminated by hand, and nobody calls the reconcile task: a scheduled run alone starts a new run
 * for the order, its memo says REPAIRED and names the count, and the order then converges (paid).
 * The real CLI's {@code temporal schedule describe} lists the recent actions. Paused, the schedule
 * still runs once per admin trigger (202), and that run's memo says CLEAN. A restart's ensure
 * leaves an agreeing schedule unchanged and paused; another interval updates it; two instances
 * creating it at once both succeed. Dev server only: the in-memory engine has no schedules.
 */
@Tag("dev-server-only")
class X28ReconcileScheduleTest {
  @RegisterExtension static final Stack stack = new Stack().with("reconciliation.scheduleEvery", "5s");
  @RegisterExtension static final Evidence ev = new Evidence("X-28",
      "reconcile schedule: orphan repaired by the schedule alone, trigger, overlap SKIP, idempotent ensure");

  @Test
  void theScheduleAloneRepairsAnOrphan() throws Exception {
    WorkflowClient client = stack.wiring.temporal().client();
    ReconcileSchedule schedule = new ReconcileSchedule(client);
    ScheduleDescription first = schedule.describe();
    ev.equal(ScheduleOverlapPolicy.SCHEDULE_OVERLAP_POLICY_SKIP, first.getSchedule().getPolicy().getOverlap(),
        "the schedule's overlap policy is SKIP");
    ev.equal(Duration.ofSeconds(5), first.getSchedule().getSpec().getIntervals().get(0).getEvery(),
        "the schedule runs at the configured interval");
    ev.check(!first.getSchedule().getState().isPaused(), "the service created it running");

    stack.sku("sku-x28", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-2801");
    String id = Buyers.create(buyer, "x28", "sku-x28", 1).text("order_id");
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", id);
    String lostRun = stack.latestRunId(workflowId);
    client.newUntypedWorkflowStub(workflowId).terminate("lost by hand (X-28)");
    long terminatedAt = System.currentTimeMillis();
    ev.equal("TERMINATED", stack.workflowStatus(workflowId), "the order's workflow is gone");
    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "the order is left CREATED");

    // no reconcile task from here on: only the schedule can start a run for it
    stack.awaitTrue(() -> "RUNNING".equals(stack.workflowStatus(workflowId)), 60_000,
        "the schedule did not repair the orphan");
    ev.note("a new run for " + workflowId + " after " + (System.currentTimeMillis() - terminatedAt)
        + " ms (interval 5 s); the lost run was " + lostRun + ", the new one " + stack.latestRunId(workflowId));
    ev.check(!lostRun.equals(stack.latestRunId(workflowId)), "it is a new run of the order's workflow id");

    // the scheduled run that did it, found through the schedule's recent actions and its memo
    ScheduleActionResult[] repairing = {null};
    ReconcileResult[] repairResult = {null};
    stack.awaitTrue(() -> {
      for (ScheduleActionResult a : schedule.describe().getInfo().getRecentActions()) {
        ReconcileResult r = finished(client, a);
        if (r != null && r.repaired().contains(id)) {
          repairing[0] = a;
          repairResult[0] = r;
          return true;
        }
      }
      return false;
    }, 30_000, "no recent action of the schedule reports the repair");
    ScheduleActionExecutionStartWorkflow action = (ScheduleActionExecutionStartWorkflow) repairing[0].getAction();
    WorkflowExecutionDescription run = describe(client, action);
    ev.note("repairing run " + action.getWorkflowId() + " scheduled at " + repairing[0].getScheduledAt()
        + ": result " + repairResult[0]);
    ev.equal(ReconcileResult.REPAIRED, run.getMemo(ReconcileWorkflow.MEMO_OUTCOME, String.class),
        "the run's memo says REPAIRED");
    ev.equal(1, run.getMemo(ReconcileWorkflow.MEMO_REPAIRED, Integer.class), "the run's memo counts one repaired order");
    ev.check(repairResult[0].clean() && repairResult[0].findings().isEmpty(),
        "after the repair the run's report has no finding");
    ev.check(action.getWorkflowId().startsWith(ReconcileWorkflow.SCHEDULE_ID), "the run belongs to the schedule");
    ev.equal(ReconcileResult.REPAIRED, run.getTypedSearchAttributes().get(ReconcileWorkflow.OUTCOME),
        "the run's search attribute ReconcileOutcome says REPAIRED");
    String[] listed = {""};
    boolean found = stack.within(() -> {
      try {
        listed[0] = TemporalCliProcess.run(stack, "workflow", "list", "--query", "ReconcileOutcome=\"REPAIRED\"")
            .output();
        return listed[0].contains(action.getWorkflowId());
      } catch (Exception e) {
        return false;
      }
    }, 15_000);
    ev.note("temporal workflow list --query 'ReconcileOutcome=\"REPAIRED\"':\n" + listed[0]);
    ev.check(found, "the CLI lists the repairing run by its ReconcileOutcome");

    TemporalCliProcess.Result cli = TemporalCliProcess.run(stack, "schedule", "describe", "--schedule-id",
        ReconcileWorkflow.SCHEDULE_ID);
    ev.note("temporal schedule describe --schedule-id " + ReconcileWorkflow.SCHEDULE_ID + ":\n" + cli.output());
    ev.equal(0, cli.exit(), "the CLI describes the schedule");
    ev.check(cli.output().contains("\"SkippedOverlap\""), "the CLI counts the actions (total, skipped by overlap)");
    TemporalCliProcess.Result cliJson = TemporalCliProcess.run(stack, "schedule", "describe", "--schedule-id",
        ReconcileWorkflow.SCHEDULE_ID, "--output", "json");
    ev.note("temporal schedule describe --output json:\n" + cliJson.output());
    ev.equal(0, cliJson.exit(), "the CLI describes the schedule as JSON");
    ev.check(cliJson.output().contains("\"recentActions\"") && cliJson.output().contains(action.getWorkflowId()),
        "the CLI's recent actions list the repairing run");
    ev.check(cliJson.output().contains("SCHEDULE_OVERLAP_POLICY_SKIP"), "the CLI shows the overlap policy SKIP");
    TemporalCliProcess.Result runCli = TemporalCliProcess.run(stack, "workflow", "describe", "--workflow-id",
        action.getWorkflowId(), "--output", "json");
    ev.equal(0, runCli.exit(), "the CLI describes the repairing run");
    ev.check(runCli.output().contains("\"outcome\"") && runCli.output().contains("memo"),
        "the CLI's describe of the run carries its memo");

    // the repaired run converges the order
    ev.equal("PAID", Buyers.pay(buyer, id).text("status"), "the repaired run takes the payment");
    stack.awaitStatus(id, "PAID", 30_000);
    String timeline = stack.sql.timeline(id);
    ev.note("timeline " + id + ": " + timeline);
    ev.equal(1, Buyers.chargeRequests(stack.channel, id), "exactly one charge request");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "one ORDER_PAID event");
    stack.awaitNoticesApplied(1, 15_000);

    // paused, the schedule runs only when the admin task triggers it
    operator(client).pause("X-28: only the trigger runs it now");
    stack.awaitTrue(() -> schedule.describe().getInfo().getRunningActions().isEmpty(), 60_000,
        "a scheduled run still running");
    long before = schedule.describe().getInfo().getNumActions();
    HttpJson.Reply triggered = stack.admin.post("/tasks/trigger-reconcile-schedule", null);
    ev.note("POST /tasks/trigger-reconcile-schedule → " + triggered.status() + " " + triggered.raw().trim());
    ev.equal(202, triggered.status(), "the admin task answers 202");
    ev.equal(ReconcileWorkflow.SCHEDULE_ID, triggered.text("schedule_id"), "with the schedule's id");
    stack.awaitTrue(() -> schedule.describe().getInfo().getNumActions() == before + 1, 30_000,
        "the trigger started no action");
    List<ScheduleActionResult> recent = schedule.describe().getInfo().getRecentActions();
    ScheduleActionResult last = recent.get(recent.size() - 1);
    ReconcileResult[] afterTrigger = {null};
    stack.awaitTrue(() -> (afterTrigger[0] = finished(client, last)) != null, 60_000, "the triggered run did not finish");
    WorkflowExecutionDescription triggeredRun = describe(client,
        (ScheduleActionExecutionStartWorkflow) last.getAction());
    ev.note("triggered run " + ((ScheduleActionExecutionStartWorkflow) last.getAction()).getWorkflowId() + ": "
        + afterTrigger[0]);
    ev.equal(ReconcileResult.CLEAN, triggeredRun.getMemo(ReconcileWorkflow.MEMO_OUTCOME, String.class),
        "the triggered run's memo says CLEAN");
    Thread.sleep(6_000); // more than one interval: a paused schedule starts nothing by itself
    ev.equal(before + 1, schedule.describe().getInfo().getNumActions(), "paused: no action but the triggered one");
    ev.check(!stack.admin.post("/tasks/trigger-reconcile-schedule?x=1", null).raw().isEmpty(),
        "an unknown parameter is refused with a body");
    ev.equal(400, stack.admin.post("/tasks/trigger-reconcile-schedule?x=1", null).status(),
        "an unknown parameter is a 400");

    // what a restart does: the same interval changes nothing (paused stays paused), another updates
    ev.equal(ReconcileSchedule.Change.UNCHANGED, schedule.ensure(Duration.ofSeconds(5)), "same interval: unchanged");
    ev.check(schedule.describe().getSchedule().getState().isPaused(), "the operator's pause survives");
    ev.equal(ReconcileSchedule.Change.UPDATED, schedule.ensure(Duration.ofSeconds(7)), "another interval: updated");
    ScheduleDescription updated = schedule.describe();
    ev.equal(Duration.ofSeconds(7), updated.getSchedule().getSpec().getIntervals().get(0).getEvery(), "the new interval");
    ev.check(updated.getSchedule().getState().isPaused(), "still paused after the update");

    // two instances starting at once against an engine without the schedule: both succeed, one creates it
    operator(client).delete();
    ev.check(!schedule.exists(), "deleted");
    ev.equal(404, stack.admin.post("/tasks/trigger-reconcile-schedule", null).status(),
        "the trigger without a schedule: 404");
    ExecutorService two = Executors.newFixedThreadPool(2);
    List<Callable<ReconcileSchedule.Change>> starts = new ArrayList<>();
    for (int i = 0; i < 2; i++) starts.add(() -> new ReconcileSchedule(client).ensure(Duration.ofSeconds(5)));
    List<ReconcileSchedule.Change> changes = new ArrayList<>();
    for (Future<ReconcileSchedule.Change> f : two.invokeAll(starts)) changes.add(f.get());
    two.shutdown();
    ev.note("two concurrent ensures: " + changes);
    ev.equal(1L, changes.stream().filter(c -> c == ReconcileSchedule.Change.CREATED).count(), "exactly one created it");
    ev.check(changes.contains(ReconcileSchedule.Change.UNCHANGED), "the other found it as it wants it");
    ScheduleDescription last2 = schedule.describe();
    ev.note("actions: " + first.getInfo().getNumActions() + " at start, " + before + " before the trigger; skipped"
        + " (overlap) " + updated.getInfo().getNumActionsSkippedOverlap());
    ev.equal(ScheduleOverlapPolicy.SCHEDULE_OVERLAP_POLICY_SKIP, last2.getSchedule().getPolicy().getOverlap(),
        "recreated with overlap SKIP");

    stack.checkReconcileClean(ev, "reconcile clean at the end");
  }

  /** The schedule as an operator's own client sees it (pause, delete). */
  private static io.temporal.client.schedules.ScheduleHandle operator(WorkflowClient client) {
    return io.temporal.client.schedules.ScheduleClient.newInstance(client.getWorkflowServiceStubs(),
            io.temporal.client.schedules.ScheduleClientOptions.newBuilder().setNamespace("default").build())
        .getHandle(ReconcileWorkflow.SCHEDULE_ID);
  }

  /** The run's result once it completed, else null. */
  private static ReconcileResult finished(WorkflowClient client, ScheduleActionResult a) {
    if (!(a.getAction() instanceof ScheduleActionExecutionStartWorkflow w)) return null;
    WorkflowExecutionDescription d = describe(client, w);
    if (d.getStatus() != io.temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED) {
      return null;
    }
    return client.newUntypedWorkflowStub(w.getWorkflowId(), Optional.of(w.getFirstExecutionRunId()), Optional.empty())
        .getResult(ReconcileResult.class);
  }

  private static WorkflowExecutionDescription describe(WorkflowClient client, ScheduleActionExecutionStartWorkflow w) {
    return client.newUntypedWorkflowStub(w.getWorkflowId(), Optional.of(w.getFirstExecutionRunId()), Optional.empty())
        .describe();
  }
}
