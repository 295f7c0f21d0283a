package io.flashsale.workflows;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import java.util.List;

/**
 * Whether the run refuses a buyer's create, pay or cancel in its current state, and with which
 * answer. A pure function of what the run holds ({@link RunFacts}; no Workflow call, no engine),
 * so a validator and its handler decide alike (docs/DESIGN.md §Workflow design, "Pay and cancel").
 */
final class CommandRefusals {
  private CommandRefusals() {}

  /** The buyer's command the run accepted; a second command is rejected at once. */
  enum Command { PAY, CANCEL }

  /**
   * What the rules read of the run.
   *
   * @param order the order as the run last saw it, or null (none yet)
   * @param loading the run was started with an order id (or has not started): it loads its order
   * @param createStarted the create update reached its handler (it may still be reserving)
   * @param createSettled a create's handler has answered
   * @param noCreate no create came within the bound: the run ends without an order
   * @param accepted the command the run accepted, or null
   * @param cancelRequested the run was cancelled (temporal workflow cancel)
   */
  record RunFacts(OrderView order, boolean loading, boolean createStarted, boolean createSettled, boolean noCreate,
      Command accepted, boolean cancelRequested) {

    /**
     * No order yet, but one may come: it is being loaded, or no create has settled (one may be
     * reserving: the API lets a pay through once the row is committed, which can be before the
     * create's handler has its answer). A command then waits for it and decides.
     */
    boolean orderMayCome() {
      // a create that started after the bound gave up still makes the order: wait for it too
      return loading || (!createSettled && (createStarted || !noCreate) && !cancelRequested);
    }
  }

  /**
   * The answer to a create, from what the reserve answered. A run that already holds its order
   * refuses to make another: CREATED becomes REPLAY. A fresh run that had no order takes a REPLAY
   * of a version-1 order as its own CREATED: an earlier attempt of this run's reserve committed and
   * its answer was lost (a local step that ran out and went on as an activity task, or one run
   * again after a worker crash, is at its attempt 1 again). The workflow id is the key's scope and
   * the lock keeps every other create of it out, so the row is this run's.
   *
   * @param freshRun the run was not started with an order id (continue-as-new, repair, a late
   *     notice did not make the order, even when this create comes before the run has loaded it)
   * @param alreadyCreated the run held an order when the create took the lock
   */
  static CreateResult create(boolean freshRun, boolean alreadyCreated, CreateResult reserved) {
    CreateResult r = reserved;
    if (freshRun && !alreadyCreated && CreateOutcome.REPLAY.equals(r.outcome()) && r.order() != null
        && r.order().version() == 1) {
      r = new CreateResult(CreateOutcome.CREATED, r.order(), r.transitions(), r.createdAt());
    }
    if (alreadyCreated && CreateOutcome.CREATED.equals(r.outcome())) {
      r = new CreateResult(CreateOutcome.REPLAY, r.order(), List.of(), null);
    }
    return r;
  }

  /** Why a pay is refused in the current state, or null when it may run. */
  static CommandResult pay(RunFacts run) {
    OrderView order = run.order();
    if (order == null) {
      return run.orderMayCome() ? null : new CommandResult(CommandOutcome.REJECTED, null, 0);
    }
    if (order.status() != OrderStatus.CREATED || run.accepted() != null || run.cancelRequested()) {
      return rejected(order, run.accepted());
    }
    return null;
  }

  /**
   * Why a cancel is answered without running: REJECTED, or REPLAY_CANCEL for an order already
   * CANCELLED; null when it may run (or waits for the cancel in flight).
   */
  static CommandResult cancel(RunFacts run) {
    OrderView order = run.order();
    if (order == null) {
      return run.orderMayCome() ? null : new CommandResult(CommandOutcome.REJECTED, null, 0);
    }
    if (order.status() == OrderStatus.CANCELLED) {
      return new CommandResult(CommandOutcome.REPLAY_CANCEL, order.status(), order.version());
    }
    if (run.accepted() == Command.CANCEL) {
      return null; // in flight: the handler waits for it and answers
    }
    if (order.status() != OrderStatus.CREATED || run.accepted() != null) {
      return rejected(order, run.accepted());
    }
    return null;
  }

  /**
   * The answer to a cancel once the cancel in flight has run: whenCancelled (CANCELLED for the
   * command that ran it, REPLAY_CANCEL for one that waited for it) if the order is CANCELLED.
   */
  static CommandResult cancelled(OrderView order, CommandOutcome whenCancelled) {
    return order.status() == OrderStatus.CANCELLED
        ? new CommandResult(whenCancelled, order.status(), order.version())
        : rejected(order, Command.CANCEL);
  }

  /**
   * REJECTED, with the status the accepted command is taking the order to: a CREATED order with a
   * pay accepted shows PAYING, with a cancel accepted CANCELLED.
   */
  static CommandResult rejected(OrderView order, Command accepted) {
    OrderStatus shown = order.status();
    if (shown == OrderStatus.CREATED && accepted == Command.PAY) shown = OrderStatus.PAYING;
    if (shown == OrderStatus.CREATED && accepted == Command.CANCEL) shown = OrderStatus.CANCELLED;
    return new CommandResult(CommandOutcome.REJECTED, shown, order.version());
  }
}
