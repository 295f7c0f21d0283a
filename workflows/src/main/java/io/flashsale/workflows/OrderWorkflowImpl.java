package io.flashsale.workflows;

import io.flashsale.domain.Attention;
import io.flashsale.domain.ChannelAnswer;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderState;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Step;
import io.flashsale.domain.Transition;
import io.flashsale.paymentchannel.ChannelResult;
import io.flashsale.workflows.CommandRefusals.Command;
import io.flashsale.workflows.CommandRefusals.RunFacts;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.CancellationScope;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInit;
import io.temporal.workflow.WorkflowLock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The order as a durable state machine: the loop, the handlers and the transitions. Every status
 * write happens in an activity through the database's transition function; this class decides what
 * to do next and in which order. One lock serializes everything that touches the order (create,
 * pay, cancel, notices, timers), the database row lock makes each step safe even if two ever
 * overlapped. Beside it: {@link DatabaseSteps} and {@link ChannelSteps} (the activities, their
 * options, a data error's operator attention), {@link Deadlines} (the loop's clock and timers),
 * {@link Visibility} (search attributes, summary, details), {@link CommandRefusals} (which
 * commands the state refuses) and {@link ChangeIds} (every Workflow.getVersion change id).
 */
public class OrderWorkflowImpl implements OrderWorkflow {
  private static final Logger log = Workflow.getLogger(OrderWorkflowImpl.class);

  private final ChannelSteps channel;
  private final DatabaseSteps database;
  private final Deadlines deadlines;

  private final WorkflowLock lock = Workflow.newWorkflowLock();
  private final Deque<Notice> notices = new ArrayDeque<>();
  private final List<String> timeline = new ArrayList<>();

  private OrderStart start;
  private final OrderSettings settings;
  private OrderView order;
  private boolean createSettled;
  /** The buyer's command that was accepted; a second command is rejected at once. */
  private Command command;
  private String lastEffect;
  private int refundRounds;
  /** Operator signals recorded by this run (their arrival refs). */
  private int signalArrivals;
  /** The create update reached its handler (it may still be reserving). */
  private boolean createStarted;
  /** No create came within the bound: the run ends without an order, a command waiting for one is refused. */
  private boolean noCreate;
  /** This run took over the row a lost attempt of its create committed ({@link #adoptLostCreate}). */
  private boolean adopted;
  /** The run was cancelled (temporal workflow cancel): settle the order, then end. */
  private boolean cancelRequested;
  /** A pay of this run holds the order (from beginPay to its answer applied). */
  private boolean payInFlight;
  /** The round at the channel in flight for an UNKNOWN order, or for a REFUNDING one (docs/DESIGN.md §Every order ends). */
  private ChannelRound<ChannelActivities.Converged> converging;
  private ChannelRound<ChannelAnswer> refunding;
  /** Rounds of the current status that ended without a definite answer (or were refused). */
  private int roundsRun;
  /** An UNKNOWN order's first query is due (its first delay has passed): rounds may start. */
  private boolean firstQueryDue;
  /** When the round in flight started and how long it may last (workflow clock, ms). */
  private long roundStartedAt;
  private long roundBoundMillis;
  /** A round that ended before its bound (a refusal) is followed by a pause: the next starts then. */
  private long nextRoundAt;
  /** Why the order asks for an operator, as this run raised it (orders.attention, OrderAttention), or null. */
  private Attention raised;

  /**
   * The settings are known before any handler runs: with update-with-start the create handler can
   * run before {@link #run}, and it must already know where its database step executes.
   */
  @WorkflowInit
  public OrderWorkflowImpl(OrderStart start) {
    // handlers of the run's first task run before run(): a pay or cancel for a run that loads an
    // order must already see that it waits for the load (awaitOrder), not find no order at all
    this.start = start;
    this.settings = start.settings() == null ? OrderSettings.defaults() : start.settings();
    channel = new ChannelSteps(settings);
    database = new DatabaseSteps(settings.localDatabaseSteps(), start.orderId(), () -> order, effect -> lastEffect = effect,
        () -> raised);
    deadlines = new Deadlines(settings, this::orderName);
  }

  /** The order a summary names: its id once known, else the run's workflow id. */
  private String orderName() {
    if (order != null) return order.orderId();
    return start.orderId() != null ? start.orderId() : Workflow.getInfo().getWorkflowId();
  }

  @Override
  public void run(OrderStart start) {
    this.start = start;
    if (start.pendingNotices() != null) notices.addAll(start.pendingNotices());
    if (start.timeline() != null) timeline.addAll(start.timeline());
    try {
      if (start.orderId() != null) {
        lock.lock();
        try {
          track(new Step("LOADED", step("load", db -> db.load(start.orderId())), List.of()));
          if (order.status() == OrderStatus.PAYING
              && Workflow.getVersion(ChangeIds.RESUME_PAYING, Workflow.DEFAULT_VERSION, 1) == 1) {
            // an adopted order (repair, late notice, continue-as-new): the run that made the charge is
            // gone with its answer, so it is UNKNOWN
            track(step("applyChannelAnswer", db -> db.applyChannelAnswer(order.orderId(),
                ChannelAnswer.unknown("run lost"), "repair: charge answer lost")));
          }
        } finally {
          lock.unlock();
        }
      }
      if (!awaitCreate()) {
        return; // SOLD_OUT / USER_LIMIT / KEY_REUSED: no order row; or no create came at all
      }
      deadlines.start(adopted, start.reservationExpiresAt());
      loop();
    } catch (CanceledFailure cancelled) {
      if (Workflow.getVersion(ChangeIds.WORKFLOW_CANCEL, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
        throw cancelled;
      }
      // the order outlives the request: a charge may be in flight, so settle it in a scope the
      // cancel does not reach, then end the run as cancelled
      Workflow.newDetachedCancellationScope(this::settleAfterCancel).run();
      throw cancelled;
    }
  }

  /** Waits for the create update; false when there is no order to run. */
  private boolean awaitCreate() {
    if (order != null) return true;
    Supplier<Boolean> settled = () -> order != null || (createSettled && Workflow.isEveryHandlerFinished());
    // the bound matters only to a run whose create has not started: asked there, not before (it
    // came with await-cancels-timer, so no run took its bound with timers that are not cancelled)
    if (!createStarted
        && Workflow.getVersion(ChangeIds.CREATE_BOUND, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
      Workflow.await(settled);
      return order != null;
    }
    // started without its create (by hand, or the update was lost): end after a bound, not never
    // re-checked: a create may start in the same task as the timer fires
    if (!createStarted && !Deadlines.awaitOrTimeout(settings.reservationTtl(),
        "await the create of " + Workflow.getInfo().getWorkflowId() + " until "
            + Deadlines.at(Workflow.currentTimeMillis() + settings.reservationTtl().toMillis()),
        () -> createStarted || order != null)
        && !createStarted && order == null && !adoptLostCreate()) {
      noCreate = true;
      Workflow.await(Workflow::isEveryHandlerFinished); // a pay or cancel that waited for the create is refused
      if (!createStarted && order == null) {
        log.info("run {} ended: no create within {}", Workflow.getInfo().getWorkflowId(), settings.reservationTtl());
        return false;
      }
    }
    Deadlines.awaitUnlessCancelled(settled);
    return order != null;
  }

  /**
   * A create whose reserve committed in a workflow task that never completed, and whose update the
   * engine then dropped (the API's call gave up at its deadline), leaves a CREATED row no run holds.
   * The API answers the key's retries from that row (200 REPLAY), so no create comes again: before
   * the run ends for want of one, it looks for that row and takes it over, so the buyer can pay and
   * the reservation expires (docs/DESIGN.md §Workflow design, "A lost create"). True when it did.
   */
  private boolean adoptLostCreate() {
    if (Workflow.getVersion(ChangeIds.ADOPT_LOST_CREATE, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
      return false;
    }
    OrderView lost = step("findOfRun", db -> db.findOfRun(start.tenant(), start.subject(), start.requestKey(),
        Workflow.getInfo().getWorkflowId()));
    // CREATED v1 is what a reserve alone leaves; any later state was written by a run that held it
    if (lost == null || lost.status() != OrderStatus.CREATED || lost.version() != 1 || order != null) {
      return order != null;
    }
    log.warn("order {}: its create's answer was lost; this run takes the order over", lost.orderId());
    lock.lock();
    try {
      if (order != null) return true; // a create started during the step and made (or found) it: its own
      adopted = true;
      track(new Step("ADOPTED", lost, List.of()));
    } finally {
      lock.unlock();
    }
    return true;
  }

  /**
   * The order after create, one event at a time: queued notices first; then what the status asks
   * for (docs/DESIGN.md §Workflow design). Ends when a final order has had its late-notice window.
   */
  private void loop() {
    while (true) {
      if (!cancelRequested && historyTooLong() && Workflow.isEveryHandlerFinished()) {
        endRounds(); // the next run starts its own
        continueAsNew();
      }
      if (!notices.isEmpty()) {
        applyNotice(notices.poll());
        continue;
      }
      OrderStatus status = order.status();
      if (converging != null && status != OrderStatus.UNKNOWN || refunding != null && status != OrderStatus.REFUNDING) {
        endRounds(); // the order left the status the round was for
      }
      // a switch expression: a new status does not compile until it is handled here
      boolean goOn = switch (status) {
        case REFUNDING -> {
          deadlines.cancelTimer(); // its rounds wait on their own backoff
          if (ChangeIds.ownedDeadlines()) {
            awaitRefund();
          } else {
            refund();
          }
          yield true;
        }
        case PAID, FAILED, CANCELLED, REFUNDED -> {
          clearAttention();
          yield awaitLateNotices();
        }
        case CREATED, PAYING, UNKNOWN -> {
          if (status == OrderStatus.CREATED && cancelRequested) {
            locked(() -> step("cancel", db -> db.cancel(order.orderId(), "workflow cancelled")));
          } else if (status == OrderStatus.PAYING && !payInFlight && ChangeIds.ownedDeadlines()) {
            payLost();
          } else if (status == OrderStatus.UNKNOWN && ChangeIds.ownedDeadlines()) {
            awaitConvergence();
          } else if (!awaitChangeOrDeadline(status)) {
            onDeadline();
          }
          yield true;
        }
      };
      if (!goOn) return;
    }
  }

  private boolean historyTooLong() {
    int limit = settings.continueAsNewAfterEvents() > 0 ? settings.continueAsNewAfterEvents() : 4_000;
    return Workflow.getInfo().isContinueAsNewSuggested() || Workflow.getInfo().getHistoryLength() > limit;
  }

  /** No update running: the new run reloads the order and takes over the queued notices. */
  private void continueAsNew() {
    Workflow.continueAsNew(new OrderStart(start.tenant(), start.subject(), start.requestKey(), order.orderId(),
        settings, deadlines.reservationExpiresAt(), List.copyOf(notices), List.copyOf(timeline)));
  }

  /**
   * A final order waits out the late-notice window (a late success must still be refunded); true
   * when a notice came and the loop goes on, false when the run may end.
   */
  private boolean awaitLateNotices() {
    if (cancelRequested) {
      // an update accepted is answered before the run ends; a later notice starts a new run (signal-with-start)
      if (!Workflow.isEveryHandlerFinished() && ChangeIds.ownedDeadlines()) {
        Workflow.await(Workflow::isEveryHandlerFinished);
        return !notices.isEmpty(); // a notice that came meanwhile is applied (it may be a charge to refund)
      }
      return false;
    }
    if (neverReachedTheChannel() && ChangeIds.endsUnchargedAtOnce()
        || order.status() == OrderStatus.PAID && ChangeIds.paidEndsAtOnce()) {
      // the channel never saw this order, so no notice of it is due; or it is PAID, so a notice of
      // its charge is a copy, answered from the row at arrival. One that needs the order anyway
      // starts a new run by signal-with-start, which loads the order and applies it
      // (docs/DESIGN.md §Workflow design, "Late notices")
      Workflow.await(Workflow::isEveryHandlerFinished);
      return !notices.isEmpty();
    }
    deadlines.awaitLateNotice(order.version(), () -> !notices.isEmpty());
    if (!notices.isEmpty()) return true;
    Workflow.await(Workflow::isEveryHandlerFinished);
    return !notices.isEmpty();
  }

  /**
   * CANCELLED at version 2: cancelled or expired straight from CREATED v1, so no pay began and no
   * charge was ever requested (every pay moves the order to PAYING first, in its own transition).
   */
  private boolean neverReachedTheChannel() {
    return order.status() == OrderStatus.CANCELLED && order.version() == 2;
  }

  /**
   * Waits for a notice or a new order version until the next deadline; false when the deadline
   * came. A pay in flight always ends with a new version (its answer applied).
   */
  private boolean awaitChangeOrDeadline(OrderStatus status) {
    int seenVersion = order.version();
    return deadlines.awaitChangeOrDeadline(status == OrderStatus.UNKNOWN,
        () -> !notices.isEmpty() || order.version() != seenVersion);
  }

  /**
   * PAYING with no pay of this run in flight: the pay that began it is gone with its answer (its
   * update was lost with a worker, or an earlier run made it), so whoever put the row there, the
   * order is UNKNOWN and converges by query (docs/DESIGN.md §Every order ends).
   */
  private void payLost() {
    lock.lock();
    try {
      if (order.status() != OrderStatus.PAYING) return;
      log.warn("order {} is PAYING with no pay in flight in this run: its charge answer is lost", order.orderId());
      track(step("applyChannelAnswer", db -> db.applyChannelAnswer(order.orderId(),
          ChannelAnswer.unknown("no pay in flight"), "repair: charge answer lost")));
    } finally {
      lock.unlock();
    }
  }

  /**
   * UNKNOWN converges in rounds at the channel (query; NOT_FOUND: close first), each one activity
   * whose retries the server keeps, so a day's outage costs the history what a minute's does. The
   * loop still wakes for notices and the reservation's expiry. A round that runs out raises
   * UNKNOWN_AGED and the next, longer one starts.
   */
  private void awaitConvergence() {
    int seenVersion = order.version();
    if (converging == null && !firstQueryDue) {
      // the first query waits unknownFirstQuery: a charge still on its way is found, not closed
      if (!deadlines.awaitChangeOrDeadline(true, () -> !notices.isEmpty() || order.version() != seenVersion)) {
        long now = Workflow.currentTimeMillis();
        expireIfDue();
        firstQueryDue = deadlines.queryDue(now);
      }
      return;
    }
    if (converging == null) {
      if (awaitNextRound("query the channel again for UNKNOWN")) return;
      beginRound();
      converging = channel.convergeRound(order.orderId(), roundsRun);
    }
    ChannelRound<ChannelActivities.Converged> round = converging;
    if (!deadlines.awaitChangeOrDeadline(false,
        () -> !notices.isEmpty() || order.version() != seenVersion || round.isDone())) {
      expireIfDue();
      return;
    }
    if (!round.isDone()) return; // a notice or another step: the loop looks again
    converging = null;
    ChannelRound.End<ChannelActivities.Converged> end = round.end();
    if (end.cancelled()) return;
    if (end.succeeded()) {
      roundsRun = 0;
      ChannelActivities.Converged c = end.result();
      String cause = c.byClose() ? "close" : "query";
      lock.lock();
      try {
        if (order.status() == OrderStatus.UNKNOWN) {
          track(step("applyChannelAnswer", db -> db.applyChannelAnswer(order.orderId(), c.answer(), cause)));
        }
      } finally {
        lock.unlock();
      }
      return;
    }
    roundFailed(Attention.UNKNOWN_AGED, "no definite answer from the channel in round " + (roundsRun + 1) + ": " + end.why());
  }

  /**
   * REFUNDING: rounds of refund attempts with the order's refund key (the channel never refunds
   * twice), each one activity whose retries the server keeps. A round that runs out raises
   * REFUND_AGED; a definite refusal raises REFUND_REFUSED at once and the next round waits for a
   * notice or a long pause (an operator may settle it meanwhile).
   */
  private void awaitRefund() {
    int seenVersion = order.version();
    if (refunding == null) {
      if (awaitNextRound("refund again")) return;
      beginRound();
      refunding = channel.refundRound(order, roundsRun);
    }
    ChannelRound<ChannelAnswer> round = refunding;
    Deadlines.awaitUnlessCancelled(() -> !notices.isEmpty() || order.version() != seenVersion || round.isDone());
    if (!round.isDone()) return;
    refunding = null;
    ChannelRound.End<ChannelAnswer> end = round.end();
    if (end.cancelled()) return;
    if (end.succeeded()) {
      roundsRun = 0;
      locked(() -> order.status() == OrderStatus.REFUNDING
          ? step("completeRefund", db -> db.completeRefund(order.orderId(), "refund reply"))
          : new Step("NOOP", order, List.of()));
      return;
    }
    if (end.refused(ChannelActivities.REFUND_REFUSED)) {
      roundFailed(Attention.REFUND_REFUSED, end.why());
    } else {
      roundFailed(Attention.REFUND_AGED, "refund not confirmed in round " + (roundsRun + 1) + ": " + end.why());
    }
  }

  /** A round at the channel starts: not in a cancelled scope (the settle after a cancel starts its own). */
  private void beginRound() {
    if (CancellationScope.current().isCancelRequested()) throw new CanceledFailure("run cancelled");
    roundStartedAt = Workflow.currentTimeMillis();
    roundBoundMillis = settings.roundBound(roundsRun).toMillis();
  }

  /**
   * A round ended without a definite answer, or with a refusal: the order raises its hand and the
   * next round waits out what this one was meant to last (at once after a round that ran out; a
   * refusal or a failure no retry fixes is not tried again at once).
   */
  private void roundFailed(Attention reason, String detail) {
    roundsRun++;
    // the server ends a round that runs out when its next retry would pass the bound, so up to
    // one retry interval (the cap) early: that round ran out, the next starts at once
    long endsAt = roundStartedAt + roundBoundMillis;
    boolean ranOut = Workflow.currentTimeMillis() >= endsAt - Math.max(settings.unknownQueryCapMillis(), 1_000);
    nextRoundAt = ranOut ? 0 : endsAt;
    raiseAttention(reason, detail);
  }

  /** Waits until the next round may start; true when a notice or another step came first. */
  private boolean awaitNextRound(String what) {
    long wait = nextRoundAt - Workflow.currentTimeMillis();
    if (wait <= 0) return false;
    int seenVersion = order.version();
    return Deadlines.awaitOrTimeout(Duration.ofMillis(wait), what + " " + order.orderId() + " at " + Deadlines.at(nextRoundAt),
        () -> !notices.isEmpty() || order.version() != seenVersion);
  }

  /** Cancels the round at the channel in flight, if any. */
  private void endRounds() {
    if (converging != null) converging.cancel();
    if (refunding != null) refunding.cancel();
    converging = null;
    refunding = null;
    roundsRun = 0;
    nextRoundAt = 0;
  }

  /**
   * The order cannot end on its own for now: the row (orders.attention, read by reconciliation
   * and the metric) and the search attribute OrderAttention (one query lists them in the Web UI)
   * say why. Raised once per reason; the order goes on trying.
   */
  private void raiseAttention(Attention reason, String detail) {
    lastEffect = "ATTENTION " + reason.value() + ": " + detail;
    log.warn("order {} needs an operator: {} ({})", order.orderId(), reason.value(), detail);
    if (currentAttention() == reason) return;
    raised = reason;
    step("markAttention", db -> {
      db.markAttention(order.orderId(), reason.value(), detail);
      return null;
    });
    Workflow.upsertTypedSearchAttributes(OrderWorkflow.ORDER_ATTENTION.valueSet(reason.value()));
    Visibility.attentionDetails(order, lastEffect);
  }

  /**
   * The order ended: the hand a round raised, in this run or in the one it continued (its search
   * attributes carry over), is lowered. The row's mark went with the final transition.
   */
  private void clearAttention() {
    Attention current = currentAttention();
    raised = null;
    if (current == null || current == Attention.DATA_ERROR) return; // a data error's flag is its step's
    Workflow.upsertTypedSearchAttributes(OrderWorkflow.ORDER_ATTENTION.valueUnset());
  }

  /** The reason the order's hand is up for: raised by this run, or carried into it. */
  private Attention currentAttention() {
    if (raised != null) return raised;
    return Attention.of(Workflow.getTypedSearchAttributes().get(OrderWorkflow.ORDER_ATTENTION));
  }

  /** The reservation's deadline came: it expires (CREATED is cancelled; PAYING and UNKNOWN release the unit). */
  private void expireIfDue() {
    if (deadlines.expiryDue(Workflow.currentTimeMillis())) {
      locked(() -> step("expireReservation", db -> db.expireReservation(order.orderId())));
    }
  }

  /** A deadline came: expire the reservation, and converge an UNKNOWN order by query (with backoff). */
  private void onDeadline() {
    long now = Workflow.currentTimeMillis();
    if (deadlines.expiryDue(now)) {
      locked(() -> step("expireReservation", db -> db.expireReservation(order.orderId())));
    }
    if (order.status() == OrderStatus.UNKNOWN && deadlines.queryDue(now)) {
      converge();
      deadlines.queried();
    }
  }

  /**
   * After a cancel request: commands still in flight finish, then the order is read back. CREATED
   * is cancelled (its unit released); PAYING lost its charge answer with the cancelled pay, so it
   * is UNKNOWN and converges by query like any other; the run ends once the order is final.
   */
  private void settleAfterCancel() {
    cancelRequested = true;
    Workflow.await(Workflow::isEveryHandlerFinished);
    String orderId = order != null ? order.orderId() : start.orderId();
    if (orderId == null) return; // this run created no order
    lock.lock();
    try {
      track(new Step("LOADED", step("load", db -> db.load(orderId)), List.of()));
      if (order.status() == OrderStatus.PAYING) {
        track(step("applyChannelAnswer", db -> db.applyChannelAnswer(orderId,
            ChannelAnswer.unknown("run cancelled"), "cancel: charge answer lost")));
      }
    } finally {
      lock.unlock();
    }
    log.info("order {} run cancelled while {}: settling", orderId, order.status());
    deadlines.start(adopted, start.reservationExpiresAt());
    loop();
  }

  @Override
  public CreateResult create(CreateOrder request) {
    createStarted = true;
    lock.lock();
    try {
      boolean alreadyCreated = order != null;
      boolean freshRun = start == null || start.orderId() == null;
      CreateResult r = CommandRefusals.create(freshRun, alreadyCreated,
          database.call("reserve", db -> db.reserve(request, Workflow.getInfo().getWorkflowId())));
      if (r.order() != null) {
        track(new Step(r.outcome().name(), r.order(), r.transitions()));
      }
      return r;
    } finally {
      createSettled = true;
      lock.unlock();
    }
  }

  @Override
  public void validatePay() {
    CommandResult refused = CommandRefusals.pay(facts());
    if (refused != null) throw refused.refusal();
  }

  @Override
  public CommandResult pay() {
    awaitOrder();
    // checked again: concurrent pays all pass the validator before the first one runs
    CommandResult refused = CommandRefusals.pay(facts());
    if (refused != null) return refused;
    command = Command.PAY;
    payInFlight = true;
    lock.lock();
    try {
      track(step("beginPay", db -> db.beginPay(order.orderId())));
      if (order.status() != OrderStatus.PAYING) {
        return CommandRefusals.rejected(order, command); // a notice or the expiry got there first
      }
      ChannelAnswer answer = channel.charge(order);
      String cause = answer == ChannelSteps.CHARGE_NEVER_STARTED ? "charge never started"
          : answer.definite() ? "charge reply" : "charge " + answer.detail();
      track(step("applyChannelAnswer", db -> db.applyChannelAnswer(order.orderId(), answer, cause)));
      log.info("order {} pay {} -> {}", order.orderId(), answer.result(), order.status());
      return new CommandResult(null, order.status(), order.version());
    } finally {
      payInFlight = false;
      lock.unlock();
    }
  }

  @Override
  public void validateCancel() {
    CommandResult refused = CommandRefusals.cancel(facts());
    if (refused != null) throw refused.refusal();
  }

  @Override
  public CommandResult cancel() {
    awaitOrder();
    if (command == Command.CANCEL) {
      lock.lock(); // wait for the cancel in flight, then answer as a replay
      lock.unlock();
      return CommandRefusals.cancelled(order, CommandOutcome.REPLAY_CANCEL);
    }
    CommandResult refused = CommandRefusals.cancel(facts());
    if (refused != null) return refused;
    command = Command.CANCEL;
    lock.lock();
    try {
      track(step("cancel", db -> db.cancel(order.orderId(), "cancel")));
      // CANCELLED here is this command's doing, also when a retried activity answered REPLAY_CANCEL
      return CommandRefusals.cancelled(order, CommandOutcome.CANCELLED);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void paymentNotification(Notice notice) {
    // a signal sent without a payload arrives as null: recorded as rejected like any malformed one
    notices.add(notice != null ? notice : Notice.fromJson(null));
  }

  @Override
  public OrderState status() {
    return new OrderState(order, List.copyOf(timeline), lastEffect);
  }

  /** What the command refusals read of this run; it loads its order when started with its id. */
  private RunFacts facts() {
    boolean loading = start == null || start.orderId() != null;
    return new RunFacts(order, loading, createStarted, createSettled, noCreate, command, cancelRequested);
  }

  /**
   * A command waits for the run's order while one may come: a run started by signal-with-start
   * loads it first; a fresh run's create may still be reserving (docs/DESIGN.md §Workflow design,
   * "Commands before the order").
   */
  private void awaitOrder() {
    Workflow.await(() -> order != null || !facts().orderMayCome());
  }

  /**
   * A notice that cannot be applied (bad arrival id, ...) is logged; it never fails the order's
   * workflow. A data error waits for an operator like any database step (the notice may be a
   * charge to refund, so it is never dropped); a cancelled run puts the notice back for the settle.
   */
  private void applyNotice(Notice received) {
    try {
      Notice n = received;
      if (!n.recorded() && Workflow.getVersion(ChangeIds.SIGNAL_ARRIVALS, Workflow.DEFAULT_VERSION, 1) == 1) {
        // an operator's signal: no arrival row yet; the ref makes the activity's retries record it once
        signalArrivals++;
        String ref = Workflow.getInfo().getRunId() + "/" + signalArrivals;
        Notice unrecorded = n;
        n = step("recordSignalArrival", db -> db.recordSignalArrival(order.orderId(), unrecorded, ref));
        if (n.rejection() != null) {
          lastEffect = "REJECTED";
          log.warn("order {} signal rejected: {}", order.orderId(), n.rejection());
          return;
        }
      }
      Notice arrival = n;
      locked(() -> step("applyNotice", db -> db.applyNotice(order.orderId(), arrival)));
    } catch (CanceledFailure cancelled) {
      notices.addFirst(received);
      throw cancelled;
    } catch (ActivityFailure e) {
      log.error("order {} notice {} not applied: {}", order.orderId(), received.notifyId(), e.getMessage());
    }
  }

  /** UNKNOWN converges by query; NOT_FOUND is not "not charged": close, then act on the close. */
  private void converge() {
    lock.lock();
    try {
      if (order.status() != OrderStatus.UNKNOWN) return;
      ChannelAnswer answer = channel.query(order.orderId());
      String cause = "query";
      if (answer.result() == ChannelResult.NOT_FOUND) {
        answer = channel.close(order.orderId());
        cause = "close";
      }
      if (answer.definite()) {
        ChannelAnswer definite = answer;
        String by = cause;
        track(step("applyChannelAnswer", db -> db.applyChannelAnswer(order.orderId(), definite, by)));
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * One round of refund attempts (same refund key, so the channel never refunds twice). If the
   * round fails, wait with backoff, without the lock, so a REFUNDED notice can settle the order.
   */
  private void refund() {
    lock.lock();
    try {
      if (order.status() != OrderStatus.REFUNDING) return;
      channel.refund(order);
      track(step("completeRefund", db -> db.completeRefund(order.orderId(), "refund reply")));
      refundRounds = 0;
      return;
    } catch (ActivityFailure e) {
      refundRounds++;
      lastEffect = "REFUND_NOT_CONFIRMED";
      log.warn("order {} refund round {} failed: {}", order.orderId(), refundRounds, e.getMessage());
    } finally {
      lock.unlock();
    }
    long waitSeconds = Math.min(300, 1L << Math.min(refundRounds, 8));
    Deadlines.awaitOrTimeout(Duration.ofSeconds(waitSeconds),
        "retry the refund of " + order.orderId() + " in " + waitSeconds + " s (round " + refundRounds + ")",
        () -> !notices.isEmpty());
  }

  private void locked(Supplier<Step> action) {
    lock.lock();
    try {
      track(action.get());
    } finally {
      lock.unlock();
    }
  }

  /** One database step, parked with the operator's attention on a data error ({@link DatabaseSteps#step}). */
  private <T> T step(String what, Function<OrderActivities, T> call) {
    return database.step(what, call);
  }

  /** Mirror what an activity committed: newest order version wins, timeline, search attributes. */
  private Step track(Step step) {
    lastEffect = step.effect();
    OrderView before = order;
    if (step.order() != null && (order == null || step.order().version() >= order.version())) {
      order = step.order();
    }
    if (step.transitions() != null) {
      for (Transition t : step.transitions()) timeline.add(t.label());
    }
    if (order != null && (before == null || before.status() != order.status())) {
      Visibility.statusChanged(before, order);
    }
    if (order != null) {
      Visibility.details(order, lastEffect);
    }
    return step;
  }
}
