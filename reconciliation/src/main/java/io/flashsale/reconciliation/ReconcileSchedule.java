package io.flashsale.reconciliation;

import io.flashsale.workflows.ReconcileWorkflow;
import io.temporal.api.enums.v1.ScheduleOverlapPolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.schedules.Schedule;
import io.temporal.client.schedules.ScheduleActionStartWorkflow;
import io.temporal.client.schedules.ScheduleAlreadyRunningException;
import io.temporal.client.schedules.ScheduleClient;
import io.temporal.client.schedules.ScheduleClientOptions;
import io.temporal.client.schedules.ScheduleDescription;
import io.temporal.client.schedules.ScheduleHandle;
import io.temporal.client.schedules.ScheduleIntervalSpec;
import io.temporal.client.schedules.ScheduleOptions;
import io.temporal.client.schedules.SchedulePolicy;
import io.temporal.client.schedules.ScheduleSpec;
import io.temporal.client.schedules.ScheduleUpdate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The Temporal Schedule {@value ReconcileWorkflow#SCHEDULE_ID} that runs {@link ReconcileWorkflow}
 * every interval, overlap SKIP (docs/DESIGN.md §Reconciliation on a schedule). Every instance that
 * starts with an interval makes the engine's schedule match it: created when missing, updated when
 * its interval, overlap or action differ, left alone when they agree; paused stays paused.
 */
public final class ReconcileSchedule {
  /** What {@link #ensure} did. */
  public enum Change { CREATED, UPDATED, UNCHANGED }

  /** A run that hangs must not hold the schedule for ever: SKIP would skip every later action. */
  static final Duration RUN_TIMEOUT = Duration.ofHours(1);
  /** Actions missed while the engine was down are made up within this window only. */
  static final Duration CATCHUP_WINDOW = Duration.ofMinutes(1);

  private final ScheduleClient schedules;

  /** On the client's namespace and data converter, so the schedule's payloads are written like the orders'. */
  public ReconcileSchedule(WorkflowClient client) {
    this.schedules = ScheduleClient.newInstance(client.getWorkflowServiceStubs(), ScheduleClientOptions.newBuilder()
        .setNamespace(client.getOptions().getNamespace())
        .setDataConverter(client.getOptions().getDataConverter())
        .build());
  }

  /** The schedule this service wants for {@code every}. */
  public static Schedule desired(Duration every) {
    if (every == null || every.isZero() || every.isNegative()) throw new IllegalArgumentException("every must be > 0");
    return Schedule.newBuilder()
        .setAction(ScheduleActionStartWorkflow.newBuilder()
            .setWorkflowType(ReconcileWorkflow.class)
            .setOptions(WorkflowOptions.newBuilder()
                .setWorkflowId(ReconcileWorkflow.SCHEDULE_ID)
                .setTaskQueue(ReconcileWorkflow.TASK_QUEUE)
                .setWorkflowRunTimeout(RUN_TIMEOUT)
                .build())
            .build())
        .setSpec(ScheduleSpec.newBuilder().setIntervals(List.of(new ScheduleIntervalSpec(every))).build())
        .setPolicy(SchedulePolicy.newBuilder()
            .setOverlap(ScheduleOverlapPolicy.SCHEDULE_OVERLAP_POLICY_SKIP)
            .setCatchupWindow(CATCHUP_WINDOW)
            .build())
        .build();
  }

  /**
   * Creates the schedule, or brings an existing one to {@code every}. Two instances starting at
   * once both end here: one creates, the other finds it and updates it only if it differs.
   */
  public Change ensure(Duration every) {
    Schedule want = desired(every);
    try {
      schedules.createSchedule(ReconcileWorkflow.SCHEDULE_ID, want, ScheduleOptions.newBuilder()
          .setMemo(Map.of("managedBy", "flashsale service at start: reconciliation.scheduleEvery"))
          .build());
      return Change.CREATED;
    } catch (ScheduleAlreadyRunningException exists) {
      AtomicReference<Change> change = new AtomicReference<>(Change.UNCHANGED);
      handle().update(input -> {
        Schedule have = input.getDescription().getSchedule();
        if (agrees(have, want)) return null; // no update request at all
        change.set(Change.UPDATED);
        // the operator's pause (and its note) survive a restart of the service
        return new ScheduleUpdate(Schedule.newBuilder(want).setState(have.getState()).build());
      });
      return change.get();
    }
  }

  /** Whether the engine's schedule already is what this service wants (its state aside). */
  static boolean agrees(Schedule have, Schedule want) {
    if (!(have.getAction() instanceof ScheduleActionStartWorkflow haveAction)) return false;
    ScheduleActionStartWorkflow wantAction = (ScheduleActionStartWorkflow) want.getAction();
    WorkflowOptions h = haveAction.getOptions();
    WorkflowOptions w = wantAction.getOptions();
    return Objects.equals(haveAction.getWorkflowType(), wantAction.getWorkflowType())
        && Objects.equals(h.getWorkflowId(), w.getWorkflowId())
        && Objects.equals(h.getTaskQueue(), w.getTaskQueue())
        && Objects.equals(h.getWorkflowRunTimeout(), w.getWorkflowRunTimeout())
        && have.getSpec() != null && size(have.getSpec().getIntervals()) == 1
        && Objects.equals(have.getSpec().getIntervals().get(0).getEvery(), want.getSpec().getIntervals().get(0).getEvery())
        && offset(have.getSpec().getIntervals().get(0)).equals(offset(want.getSpec().getIntervals().get(0)))
        && size(have.getSpec().getCalendars()) == 0 && size(have.getSpec().getCronExpressions()) == 0
        && have.getPolicy() != null && have.getPolicy().getOverlap() == want.getPolicy().getOverlap()
        && Objects.equals(have.getPolicy().getCatchupWindow(), want.getPolicy().getCatchupWindow());
  }

  /** The interval's phase: null when built here, zero when described. */
  private static Duration offset(ScheduleIntervalSpec interval) {
    return interval.getOffset() == null ? Duration.ZERO : interval.getOffset();
  }

  /** A list the SDK leaves null when it was never set (a schedule built here) or empty (one described). */
  private static int size(List<?> list) {
    return list == null ? 0 : list.size();
  }

  /** One action now, under the schedule's own overlap policy (skipped while a run is running). */
  public void trigger() {
    handle().trigger();
  }

  public ScheduleDescription describe() {
    return handle().describe();
  }

  /** Whether the engine has the schedule (an operator may have deleted it). */
  public boolean exists() {
    try {
      describe();
      return true;
    } catch (RuntimeException e) {
      if (notFound(e)) return false;
      throw e;
    }
  }

  public static boolean notFound(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof io.grpc.StatusRuntimeException s && s.getStatus().getCode() == io.grpc.Status.Code.NOT_FOUND) {
        return true;
      }
    }
    return false;
  }

  private ScheduleHandle handle() {
    return schedules.getHandle(ReconcileWorkflow.SCHEDULE_ID);
  }
}
