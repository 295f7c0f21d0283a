package io.flashsale.workflows;

import io.temporal.workflow.Workflow;

/**
 * The change ids the order workflow asks {@code Workflow.getVersion}, with versions DEFAULT and 1
 * (lean-history also 2): a run recorded before a change replays its DEFAULT (old) branch, one
 * recorded at 1 its version-1 branch (docs/DESIGN.md §Workflow design, "Versioning").
 *
 * <p>When an id can go: once no run started before the change can still be open. A run started
 * later records the new side, and a continued-as-new run is a new run. So each id is removable
 * after the date of the commit that introduced it plus the longest run lifetime: the reservation
 * TTL, then the late-notice window of an order the channel saw, then any refund rounds or a step
 * parked on a data error, which last until the channel or an operator settles them. The date is a
 * lower bound, not proof: the procedure of DESIGN.md (its list query for runs started before the
 * change, then the replay gate) decides.
 */
final class ChangeIds {
  private ChangeIds() {}

  /**
   * A loaded PAYING order is moved to UNKNOWN (the run that made the charge took its answer with it).
   * Removable after 2026-11-30 + longest run lifetime.
   */
  static final String RESUME_PAYING = "resume-paying";

  /**
   * An operator's notice (no arrival id) is recorded by recordSignalArrival before it is applied.
   * Removable after 2026-11-30 + longest run lifetime.
   */
  static final String SIGNAL_ARRIVALS = "signal-arrivals";

  /**
   * Timed waits cancel their timer when the condition wins (the SDK leaves it running).
   * Removable after 2026-11-30 + longest run lifetime.
   */
  static final String TIMER_CANCEL = "await-cancels-timer";

  /**
   * A run whose create update never came ends after one reservation TTL.
   * Removable after 2026-11-30 + longest run lifetime.
   */
  static final String CREATE_BOUND = "create-bound";

  /**
   * A cancel request (temporal workflow cancel) settles the order before the run ends.
   * Removable after 2026-11-30 + longest run lifetime.
   */
  static final String WORKFLOW_CANCEL = "workflow-cancel";

  /**
   * A data error parks the step with an operator flag instead of failing the run.
   * Removable after 2026-11-30 + longest run lifetime.
   */
  static final String DATA_ERROR = "data-error-attention";

  // retired, their calls removed (docs/DESIGN.md §Workflow design, versioning): "local-database-steps"
  // (the run's settings alone decide), "local-step-bound" (a local step is always bounded),
  // "charge-start-bound" (the charge always has CHARGE_START_BOUND)

  /**
   * An order cancelled before it reached the channel ends its run at once: no late-notice window.
   * Asked only by a run without {@link #LEAN_HISTORY} ({@link #endsUnchargedAtOnce}).
   * Removable after 2026-12-02 + longest run lifetime.
   */
  static final String END_UNCHARGED = "end-uncharged-at-once";

  /**
   * A lean history: the loop keeps one timer per absolute deadline across wake-ups (no cancel and
   * restart with the same deadline), no memo repeats the OrderId search attribute, and a status
   * change upserts OrderStatus alone. Version 2 (2026-12-07) adds: a PAID order ends its run once
   * its handlers finish, with no late-notice window ({@link #paidEndsAtOnce}); a run that recorded 1
   * keeps the window. Version 1 is removable after 2026-12-02, version 2's DEFAULT and 1 after
   * 2026-12-07, each + longest run lifetime.
   */
  static final String LEAN_HISTORY = "lean-history";

  /** The newest version of {@link #LEAN_HISTORY}: every ask of it names the same maximum. */
  private static final int LEAN_HISTORY_NEWEST = 2;

  /**
   * A run that gives up waiting for its create first takes over the row a lost attempt of it committed.
   * Removable after 2026-12-02 + longest run lifetime.
   */
  static final String ADOPT_LOST_CREATE = "adopt-lost-create";

  /**
   * Every non-final status has a deadline and an owner (docs/DESIGN.md §Every order ends): a PAYING
   * order with no pay in flight in this run becomes UNKNOWN; UNKNOWN and REFUNDING converge in
   * rounds of one activity whose retries the server keeps, and raise OrderAttention when a round
   * runs out or a refund is refused; a deadline already past acts without a timer; a cancelled
   * run answers its handlers before it ends. Asked where the first of these acts differs.
   * Removable after 2026-12-06 + longest run lifetime.
   */
  static final String OWNED_DEADLINES = "owned-deadlines";

  /** This run takes the {@link #OWNED_DEADLINES} branches. */
  static boolean ownedDeadlines() {
    return Workflow.getVersion(OWNED_DEADLINES, Workflow.DEFAULT_VERSION, 1) == 1;
  }

  /** This run keeps a lean history ({@link #LEAN_HISTORY}, asked at the order's first status change). */
  static boolean leanHistory() {
    return leanHistoryVersion() >= 1;
  }

  /**
   * A PAID order ends its run at once ({@link #LEAN_HISTORY} version 2): a later copy of its
   * success is answered from the row, any other notice starts a new run by signal-with-start. No
   * marker of its own: the one lean-history already records says which side a run is on.
   */
  static boolean paidEndsAtOnce() {
    return leanHistoryVersion() >= 2;
  }

  private static int leanHistoryVersion() {
    return Workflow.getVersion(LEAN_HISTORY, Workflow.DEFAULT_VERSION, LEAN_HISTORY_NEWEST);
  }

  /**
   * {@link #END_UNCHARGED} is implied by {@link #LEAN_HISTORY}, which came after it: a run that
   * recorded `lean-history` was started by code that ends an uncharged order at once, so it is
   * asked (one marker) only by a run without it (docs/DESIGN.md §Workflow design, "Versioning").
   */
  static boolean endsUnchargedAtOnce() {
    return leanHistory() || Workflow.getVersion(END_UNCHARGED, Workflow.DEFAULT_VERSION, 1) == 1;
  }
}
