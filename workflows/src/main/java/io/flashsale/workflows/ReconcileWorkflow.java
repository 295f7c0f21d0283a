package io.flashsale.workflows;

import io.temporal.common.SearchAttributeKey;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * One reconciliation with orphan repair, started by the schedule {@link #SCHEDULE_ID} (or its
 * trigger). Its outcome goes into the run's memo, so a listing or a describe shows it without
 * logs (docs/DESIGN.md §Reconciliation on a schedule).
 */
@WorkflowInterface
public interface ReconcileWorkflow {
  /** The schedule's id, and the prefix of every run's workflow id (the engine appends the time). */
  String SCHEDULE_ID = "flashsale-reconcile";
  /** Its own task queue: a reconciliation never waits behind a sale's order tasks, nor delays them. */
  String TASK_QUEUE = "flashsale-reconcile";
  /**
   * A finished run's outcome (CLEAN, REPAIRED, FINDINGS) as a Keyword search attribute, so a
   * listing finds the runs that found something: {@code ReconcileOutcome="FINDINGS"}.
   */
  SearchAttributeKey<String> OUTCOME = SearchAttributeKey.forKeyword("ReconcileOutcome");
  /** Memo keys of a finished run: its outcome, how many orders it repaired, its findings by kind, the summary line. */
  String MEMO_OUTCOME = "outcome";
  String MEMO_REPAIRED = "repaired";
  String MEMO_FINDINGS = "findings";
  String MEMO_SUMMARY = "summary";

  @WorkflowMethod(name = "Reconcile")
  ReconcileResult run();
}
