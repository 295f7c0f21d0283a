package io.flashsale.workflows;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** Reconciliation with orphan repair, as one activity (docs/DESIGN.md §Reconciliation on a schedule). */
@ActivityInterface
public interface ReconcileActivities {
  /** Starts a run for every non-final order without one, then reconciles; safe to run again. */
  @ActivityMethod(name = "ReconcileAndRepair")
  ReconcileResult reconcileAndRepair();
}
