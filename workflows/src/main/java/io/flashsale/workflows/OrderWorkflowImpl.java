package io.flashsale.workflows;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderState;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Step;
import io.flashsale.domain.Transition;
import io.flashsale.paymentchannel.ChannelResult;
import io.temporal.activity.ActivityOptions;
import io.temporal.activity.LocalActivityOptions;
import io.temporal.api.enums.v1.RetryState;
import io.temporal.api.enums.v1.TimeoutType;
import io.temporal.common.RetryOptions;
import io.temporal.common.SearchAttributeKey;
import io.temporal.common.SearchAttributeUpdate;
import io.temporal.common.SearchAttributes;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.TimeoutFailure;
import io.temporal.workflow.CancellationScope;
import io.temporal.workflow.CompletablePromise;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInit;
import io.temporal.workflow.WorkflowLock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The order as a durable state machine. Every status write happens in an activity through the
 * database's transition function; this class decides what to do next and in which order. One
 * lock serializes everything that touches the order (create, pay, cancel, notices, timers), the
 * database row lock makes each step safe even if two ever overlapped.
 */
public class OrderWorkflowImpl implements OrderWorkflow {
  public static final SearchAttributeKey<String> ORDER_ID = SearchAttributeKey.forKeyword("OrderId");
  public static final SearchAttributeKey<String> ORDER_STATUS = SearchAttributeKey.forKeyword("OrderStatus");
  public static final SearchAttributeKey<String> SKU = SearchAttributeKey.forKeyword("Sku");
  public static final SearchAttributeKey<String> TENANT = SearchAttributeKey.forKeyword("Tenant");
  /** Set (DATA_ERROR) while a database step fails with an error no retry fixes: an operator looks. */
  public static final SearchAttributeKey<String> ORDER_ATTENTION = SearchAttributeKey.forKeyword("OrderAttention");

  /*
   * Change ids for Workflow.getVersion: a run recorded before a change replays its old branch.
   */
  /** Timed waits cancel their timer when the condition wins (the SDK leaves it running). */
  static final String V_TIMER_CANCEL = "await-cancels-timer";
  /** A run whose create update never came ends after one reservation TTL. */
  static final String V_CREATE_BOUND = "create-bound";
  /** A cancel request (temporal workflow cancel) settles the order before the run ends. */
  static final String V_WORKFLOW_CANCEL = "workflow-cancel";
  /** A data error parks the step with an operator flag instead of failing the run. */
  static final String V_DATA_ERROR = "data-error-attention";
  // retired, their calls removed (docs/DESIGN.md §Workflow design, versioning): "local-database-steps"
  // (the run's settings alone decide), "local-step-bound" (a local step is always bounded),
  // "charge-start-bound" (the charge always has CHARGE_START_BOUND)
  /** An order cancelled before it reached the channel ends its run at once: no late-notice window. */
  static final String V_END_UNCHARGED = "end-uncharged-at-once";
  /**
   * A lean history: the loop keeps one timer per absolute deadline across wake-ups (no cancel and
   * restart with the same deadline), no memo repeats the OrderId search attribute, and a status
   * change upserts OrderStatus alone.
   */
  static final String V_LEAN_HISTORY = "lean-history";
  /** A run that gives up waiting for its create first takes over the row a lost attempt of it committed. */
  static final String V_ADOPT_LOST_CREATE = "adopt-lost-create";

  private static final Logger log = Workflow.getLogger(OrderWorkflowImpl.class);

  /** Start-to-close timeout of one database activity attempt; the pool's connection timeout stays below it. */
  public static final Duration DB_ACTIVITY_TIMEOUT = Duration.ofSeconds(15);

  private static final RetryOptions DB_RETRY =
      RetryOptions.newBuilder()
          .setInitialInterval(Duration.ofMillis(100))
          .setBackoffCoefficient(2)
          // bounded backoff, unlimited attempts: an order converges after a database outage
          .setMaximumInterval(Duration.ofSeconds(5))
          .setDoNotRetry(IllegalArgumentException.class.getName(), OrderActivities.DATA_ERROR)
          .build();

  /** Database steps as activity tasks: any activity worker runs them. */
  private final OrderActivities taskDb =
      Workflow.newActivityStub(
          OrderActivities.class,
          ActivityOptions.newBuilder().setStartToCloseTimeout(DB_ACTIVITY_TIMEOUT).setRetryOptions(DB_RETRY).build());

  /**
   * How long a local database step retries before it goes on as an activity task. While a local
   * step runs past the workflow task timeout (10 s) the worker completes a workflow task every
   * ~8 s to keep it, three events each; an activity task's retries add none. So an outage costs a
   * run a bounded number of events, not ~22 a minute (docs/DESIGN.md §Workflow design). Above one
   * full attempt (DB_ACTIVITY_TIMEOUT), so a slow but healthy step still finishes locally.
   */
  public static final Duration LOCAL_DB_STEP_BOUND = Duration.ofSeconds(20);

  /**
   * How long a charge may wait for an activity worker. Past it the charge never started: no
   * request left, so the order is definitely not charged (the schedule-to-start timeout only
   * fires for a task no worker took, and the charge has one attempt).
   */
  public static final Duration CHARGE_START_BOUND = Duration.ofSeconds(30);

  /** The database steps as local activities, bounded (LOCAL_DB_STEP_BOUND), then as activity tasks. */
  private final OrderActivities boundedLocalDb =
      Workflow.newLocalActivityStub(
          OrderActivities.class,
          LocalActivityOptions.newBuilder()
              .setStartToCloseTimeout(DB_ACTIVITY_TIMEOUT)
              .setRetryOptions(DB_RETRY)
              .setScheduleToCloseTimeout(LOCAL_DB_STEP_BOUND)
              .build());

  /**
   * The channel, one stub with per-method options. Charge, query and close get one attempt: no
   * answer is the value UNKNOWN, which the order converges by query, not a retry. Refunds retry
   * with the same refund key until the channel answers (a round of five; rounds repeat).
   */
  private final ChannelActivities channel =
      Workflow.newActivityStub(
          ChannelActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofSeconds(10))
              .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
              .build(),
          Map.of(
              "Refund",
              ActivityOptions.newBuilder()
                  .setStartToCloseTimeout(Duration.ofSeconds(10))
                  .setRetryOptions(
                      RetryOptions.newBuilder()
                          .setInitialInterval(Duration.ofSeconds(1))
                          .setBackoffCoefficient(2)
                          .setMaximumInterval(Duration.ofSeconds(30))
                          .setMaximumAttempts(5)
                          .build())
                  .build()));

  /** The charge: it must start within CHARGE_START_BOUND, or it never started. */
  private final ChannelActivities boundedCharge =
      Workflow.newActivityStub(
          ChannelActivities.class,
          ActivityOptions.newBuilder()
              .setScheduleToStartTimeout(CHARGE_START_BOUND)
              .setStartToCloseTimeout(Duration.ofSeconds(10))
              .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
              .build());

  /** What a charge that never started is: no request left, so nothing can land (rule 3's CLOSED). */
  static final ChannelAnswer CHARGE_NEVER_STARTED = new ChannelAnswer(ChannelResult.CLOSED, null, "never started");

  /** Where this run's database steps execute; decided by the settings it started with. */
  private OrderActivities db() {
    boolean local = settings != null && settings.localDatabaseSteps();
    return local ? boundedLocalDb : taskDb;
  }

  /**
   * One database call. A bounded local step that ran out of time (the database is down or slow)
   * is called again as an activity task, whose retries the server keeps without history events;
   * every step is idempotent, so an attempt that did commit is answered again.
   */
  private <T> T dbCall(String what, Function<OrderActivities, T> call) {
    OrderActivities stub = db();
    try {
      return call.apply(stub);
    } catch (ActivityFailure e) {
      // out of time: the retries stopped at the bound (RETRY_STATE_TIMEOUT, the last attempt's error
      // as cause) or an attempt was cut off by it
      boolean outOfTime = e.getRetryState() == RetryState.RETRY_STATE_TIMEOUT || e.getCause() instanceof TimeoutFailure;
      if (stub != boundedLocalDb || !outOfTime) throw e;
      log.warn("order {} {}: local step ran out after {}, going on as an activity task",
          orderIdForLogs(), what, LOCAL_DB_STEP_BOUND);
      return call.apply(taskDb);
    }
  }

  private String orderIdForLogs() {
    return order != null ? order.orderId() : start != null && start.orderId() != null ? start.orderId()
        : Workflow.getInfo().getWorkflowId();
  }

  private final WorkflowLock lock = Workflow.newWorkflowLock();
  private final Deque<Notice> notices = new ArrayDeque<>();
  private final List<String> timeline = new ArrayList<>();

  private OrderStart start;
  private OrderView order;
  private boolean createSettled;
  /** The buyer's command that was accepted; a second command is rejected at once. */
  private enum Command { PAY, CANCEL }

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
  /** Why the order waits for an operator (a data error), or null. */
  private String attention;

  // the loop's clock: when the reservation expires and when an UNKNOWN order is queried next
  private OrderSettings settings;
  private boolean loopReady;
  private long expiryAt;
  private boolean reservationExpired;
  private long queryAt;
  private long backoff;

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
  }

  @Override
  public void run(OrderStart start) {
    this.start = start;
    if (start.pendingNotices() != null) notices.addAll(start.pendingNotices());
    if (start.timeline() != null) timeline.addAll(start.timeline());
    settings = start.settings() == null ? OrderSettings.defaults() : start.settings();
    try {
      if (start.orderId() != null) {
        lock.lock();
        try {
          track(new Step("LOADED", step("load", db -> db.load(start.orderId())), List.of()));
          if (order.status() == OrderStatus.PAYING
              && Workflow.getVersion("resume-paying", Workflow.DEFAULT_VERSION, 1) == 1) {
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
      startLoop();
      loop();
    } catch (CanceledFailure cancelled) {
      if (Workflow.getVersion(V_WORKFLOW_CANCEL, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
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
    if (!createStarted && Workflow.getVersion(V_CREATE_BOUND, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
      Workflow.await(settled);
      return order != null;
    }
    // started without its create (by hand, or the update was lost): end after a bound, not never
    // re-checked: a create may start in the same task as the timer fires
    if (!createStarted && !awaitOrTimeout(settings.reservationTtl(), () -> createStarted || order != null)
        && !createStarted && order == null && !adoptLostCreate()) {
      noCreate = true;
      Workflow.await(Workflow::isEveryHandlerFinished); // a pay or cancel that waited for the create is refused
      if (!createStarted && order == null) {
        log.info("run {} ended: no create within {}", Workflow.getInfo().getWorkflowId(), settings.reservationTtl());
        return false;
      }
    }
    awaitUnlessCancelled(settled);
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
    if (Workflow.getVersion(V_ADOPT_LOST_CREATE, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) return false;
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

  private void startLoop() {
    if (loopReady) return;
    loopReady = true;
    // an adopted order was reserved in this run's first task: its reservation runs from the run's start
    Long carried = adopted
        ? Long.valueOf(Workflow.getInfo().getRunStartedTimestampMillis() + settings.reservationTtlMillis())
        : start.reservationExpiresAt();
    expiryAt = carried == null ? Workflow.currentTimeMillis() + settings.reservationTtlMillis() : carried;
    reservationExpired = carried != null && carried < 0;
    queryAt = 0;
    backoff = settings.unknownFirstQueryMillis();
  }

  /**
   * The order after create, one event at a time: queued notices first; then what the status asks
   * for (docs/DESIGN.md §Workflow design). Ends when a final order has had its late-notice window.
   */
  private void loop() {
    while (true) {
      if (!cancelRequested && historyTooLong() && Workflow.isEveryHandlerFinished()) {
        continueAsNew();
      }
      if (!notices.isEmpty()) {
        applyNotice(notices.poll());
        continue;
      }
      OrderStatus status = order.status();
      // a switch expression: a new status does not compile until it is handled here
      boolean goOn = switch (status) {
        case REFUNDING -> {
          cancelLoopTimer(); // its rounds wait on their own backoff
          refund();
          yield true;
        }
        case PAID, FAILED, CANCELLED, REFUNDED -> awaitLateNotices();
        case CREATED, PAYING, UNKNOWN -> {
          if (status == OrderStatus.CREATED && cancelRequested) {
            locked(() -> step("cancel", db -> db.cancel(order.orderId(), "workflow cancelled")));
          } else if (!awaitChangeOrDeadline(status)) {
            onDeadline();
          }
          yield true;
        }
      };
      if (!goOn) return;
    }
  }

  /** No update running: the new run reloads the order and takes over the queued notices. */
  private void continueAsNew() {
    Workflow.continueAsNew(new OrderStart(start.tenant(), start.subject(), start.requestKey(), order.orderId(),
        settings, reservationExpired ? -1L : expiryAt, List.copyOf(notices), List.copyOf(timeline)));
  }

  /**
   * A final order waits out the late-notice window (a late success must still be refunded); true
   * when a notice came and the loop goes on, false when the run may end.
   */
  private boolean awaitLateNotices() {
    if (cancelRequested) return false; // a later notice starts a new run (signal-with-start)
    if (neverReachedTheChannel() && endsUnchargedAtOnce()) {
      // the channel never saw this order, so no notice of it is due; one that comes anyway starts
      // a new run by signal-with-start, which loads the order and applies it (docs/DESIGN.md
      // §Workflow design, "Late notices")
      Workflow.await(Workflow::isEveryHandlerFinished);
      return !notices.isEmpty();
    }
    if (leanHistory()) {
      // one window per status: a notice that changes nothing (a duplicate) keeps its deadline and timer
      if (lateWindowVersion != order.version()) {
        lateWindowVersion = order.version();
        lateWindowEndsAt = Workflow.currentTimeMillis() + settings.lateNoticeWindow().toMillis();
      }
      awaitUntil(lateWindowEndsAt, () -> !notices.isEmpty());
    } else {
      // a timer that fires in the same task as a signal still leaves the notice queued: keep going
      awaitOrTimeout(settings.lateNoticeWindow(), () -> !notices.isEmpty());
    }
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
   * Waits for a notice or a new order version, until the next deadline: the reservation's expiry
   * and, for UNKNOWN, the next query. True when something changed, false when the deadline came.
   */
  private boolean awaitChangeOrDeadline(OrderStatus status) {
    if (status == OrderStatus.UNKNOWN && queryAt == 0) {
      queryAt = Workflow.currentTimeMillis() + backoff;
    }
    long now = Workflow.currentTimeMillis();
    long wakeAt = Long.MAX_VALUE;
    if (!reservationExpired) wakeAt = expiryAt;
    if (status == OrderStatus.UNKNOWN) wakeAt = Math.min(wakeAt, queryAt);
    int seenVersion = order.version();
    Supplier<Boolean> changed = () -> !notices.isEmpty() || order.version() != seenVersion;
    if (leanHistory()) {
      return awaitUntil(wakeAt, changed);
    }
    return wakeAt == Long.MAX_VALUE
        ? awaitForever(changed)
        : awaitOrTimeout(Duration.ofMillis(Math.max(1, wakeAt - now)), changed);
  }

  /**
   * The loop's timer: its deadline (workflow clock, ms), how it ended (null when it fired, else its
   * failure) and its scope. Started once for a deadline and kept while the loop waits for that
   * deadline, whatever woke the loop meanwhile; so at most one timer runs.
   */
  private long timerAt;
  private CompletablePromise<RuntimeException> timerEnded;
  private CancellationScope timerScope;
  /** The order version whose late-notice window is open, and when that window closes. */
  private int lateWindowVersion;
  private long lateWindowEndsAt;

  /** Waits until the condition holds or the deadline passes; true when the condition won. */
  private boolean awaitUntil(long wakeAt, Supplier<Boolean> condition) {
    if (condition.get()) return true;
    // another deadline, or a timer of a cancelled run's scope (the settle after the cancel starts its own)
    if (timerScope != null && (timerAt != wakeAt || timerScope.isCancelRequested())) cancelLoopTimer();
    if (wakeAt == Long.MAX_VALUE) return awaitForever(condition);
    if (timerScope == null) {
      timerEnded = Workflow.newPromise();
      timerScope = startTimer(Duration.ofMillis(Math.max(1, wakeAt - Workflow.currentTimeMillis())), timerEnded);
      timerAt = wakeAt;
    }
    CompletablePromise<RuntimeException> ended = timerEnded;
    Workflow.await(() -> ended.isCompleted() || condition.get());
    if (!ended.isCompleted()) return true;
    timerScope = null;
    timerEnded = null;
    if (ended.get() != null) throw ended.get(); // CanceledFailure: the run itself was cancelled
    return false;
  }

  /** Cancels the loop's timer, if one runs: what comes next waits on another deadline. */
  private void cancelLoopTimer() {
    if (timerScope == null) return;
    timerScope.cancel();
    timerScope = null;
    timerEnded = null;
  }

  /**
   * Starts a timer in its own cancellation scope; {@code ended} completes with null when it fires,
   * else with its failure. Completed normally either way, so a timer cancelled here leaves no failed
   * promise behind (the SDK logs each one at eviction).
   */
  private static CancellationScope startTimer(Duration in, CompletablePromise<RuntimeException> ended) {
    CancellationScope scope = Workflow.newCancellationScope(() -> Workflow.newTimer(in).handle((fired, failure) -> {
      ended.complete(failure);
      return null;
    }));
    scope.run();
    return scope;
  }

  /**
   * `end-uncharged-at-once` is implied by `lean-history`, which came after it: a run that recorded
   * `lean-history` was started by code that ends an uncharged order at once, so it is asked (one
   * marker) only by a run without it (docs/DESIGN.md §Workflow design, "Versioning").
   */
  private boolean endsUnchargedAtOnce() {
    return leanHistory() || Workflow.getVersion(V_END_UNCHARGED, Workflow.DEFAULT_VERSION, 1) == 1;
  }

  /** This run keeps a lean history (change id `lean-history`, asked at the order's first status change). */
  private boolean leanHistory() {
    return Workflow.getVersion(V_LEAN_HISTORY, Workflow.DEFAULT_VERSION, 1) == 1;
  }

  /** A deadline came: expire the reservation, and converge an UNKNOWN order by query (with backoff). */
  private void onDeadline() {
    long now = Workflow.currentTimeMillis();
    if (!reservationExpired && now >= expiryAt) {
      reservationExpired = true;
      locked(() -> step("expireReservation", db -> db.expireReservation(order.orderId())));
    }
    if (order.status() == OrderStatus.UNKNOWN && now >= queryAt) {
      converge();
      backoff = Math.min(backoff * 2, settings.unknownQueryCapMillis());
      queryAt = Workflow.currentTimeMillis() + backoff;
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
    startLoop();
    loop();
  }

  @Override
  public CreateResult create(CreateOrder request) {
    createStarted = true;
    lock.lock();
    try {
      boolean alreadyCreated = order != null;
      // a run started with an order id (continue-as-new, repair, a late notice) did not make it,
      // even when this create comes before the run has loaded it
      boolean freshRun = start == null || start.orderId() == null;
      CreateResult r = dbCall("reserve", db -> db.reserve(request, Workflow.getInfo().getWorkflowId()));
      if (freshRun && !alreadyCreated && CreateOutcome.REPLAY.equals(r.outcome()) && r.order() != null
          && r.order().version() == 1) {
        // an earlier attempt of this run's reserve committed and its answer was lost: a local step
        // that ran out and went on as an activity task, or one run again after a worker crash, is
        // at its attempt 1 again. The workflow id is the key's scope and the lock keeps every other
        // create of it out, so the row is this run's: still the creating call
        r = new CreateResult(CreateOutcome.CREATED, r.order(), r.transitions(), r.createdAt());
      }
      if (alreadyCreated && CreateOutcome.CREATED.equals(r.outcome())) {
        r = new CreateResult(CreateOutcome.REPLAY, r.order(), List.of(), null);
      }
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
    CommandResult refused = payRefusal();
    if (refused != null) throw refused.refusal();
  }

  @Override
  public CommandResult pay() {
    awaitOrder();
    // checked again: concurrent pays all pass the validator before the first one runs
    CommandResult refused = payRefusal();
    if (refused != null) return refused;
    command = Command.PAY;
    lock.lock();
    try {
      track(step("beginPay", db -> db.beginPay(order.orderId())));
      if (order.status() != OrderStatus.PAYING) {
        return rejected(); // a notice or the expiry got there first
      }
      ChannelAnswer answer = charge();
      String cause = answer == CHARGE_NEVER_STARTED ? "charge never started"
          : answer.definite() ? "charge reply" : "charge " + answer.detail();
      track(step("applyChannelAnswer", db -> db.applyChannelAnswer(order.orderId(), answer, cause)));
      log.info("order {} pay {} -> {}", order.orderId(), answer.result(), order.status());
      return new CommandResult(null, order.status(), order.version());
    } finally {
      lock.unlock();
    }
  }

  /** Why a pay is refused in the current state, or null when it may run. */
  private CommandResult payRefusal() {
    if (order == null) {
      return orderMayCome() ? null : new CommandResult(CommandOutcome.REJECTED, null, 0);
    }
    if (order.status() != OrderStatus.CREATED || command != null || cancelRequested) {
      return rejected();
    }
    return null;
  }

  @Override
  public void validateCancel() {
    CommandResult refused = cancelRefusal();
    if (refused != null) throw refused.refusal();
  }

  @Override
  public CommandResult cancel() {
    awaitOrder();
    if (command == Command.CANCEL) {
      lock.lock(); // wait for the cancel in flight, then answer as a replay
      lock.unlock();
      return order.status() == OrderStatus.CANCELLED
          ? new CommandResult(CommandOutcome.REPLAY_CANCEL, order.status(), order.version())
          : rejected();
    }
    CommandResult refused = cancelRefusal();
    if (refused != null) return refused;
    command = Command.CANCEL;
    lock.lock();
    try {
      track(step("cancel", db -> db.cancel(order.orderId(), "cancel")));
      // CANCELLED here is this command's doing, also when a retried activity answered REPLAY_CANCEL
      return order.status() == OrderStatus.CANCELLED
          ? new CommandResult(CommandOutcome.CANCELLED, order.status(), order.version())
          : rejected();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Why a cancel is answered without running: REJECTED, or REPLAY_CANCEL for an order already
   * CANCELLED; null when it may run (or waits for the cancel in flight).
   */
  private CommandResult cancelRefusal() {
    if (order == null) {
      return orderMayCome() ? null : new CommandResult(CommandOutcome.REJECTED, null, 0);
    }
    if (order.status() == OrderStatus.CANCELLED) {
      return new CommandResult(CommandOutcome.REPLAY_CANCEL, order.status(), order.version());
    }
    if (command == Command.CANCEL) {
      return null; // in flight: the handler waits for it and answers
    }
    if (order.status() != OrderStatus.CREATED || command != null) {
      return rejected();
    }
    return null;
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

  private boolean historyTooLong() {
    OrderSettings settings = start.settings() == null ? OrderSettings.defaults() : start.settings();
    int limit = settings.continueAsNewAfterEvents() > 0 ? settings.continueAsNewAfterEvents() : 4_000;
    return Workflow.getInfo().isContinueAsNewSuggested() || Workflow.getInfo().getHistoryLength() > limit;
  }

  /**
   * A command waits for the run's order: a run started by signal-with-start loads it first; a
   * fresh run's create may still be reserving (docs/DESIGN.md §Workflow design, "Commands before
   * the order").
   */
  private void awaitOrder() {
    if (awaitingLoad()) {
      Workflow.await(() -> order != null);
    } else {
      Workflow.await(() -> order != null || !orderMayCome());
    }
  }

  /** No order yet, but it is being loaded (or the run has not started). */
  private boolean awaitingLoad() {
    return start == null || start.orderId() != null;
  }

  /**
   * No order yet, but one may come: it is being loaded, or no create has settled (one may be
   * reserving: the API lets a pay through once the row is committed, which can be before the
   * create's handler has its answer). A command then waits for it and decides.
   */
  private boolean orderMayCome() {
    // a create that started after the bound gave up still makes the order: wait for it too
    return awaitingLoad() || (!createSettled && (createStarted || !noCreate) && !cancelRequested);
  }

  /**
   * A notice that cannot be applied (bad arrival id, ...) is logged; it never fails the order's
   * workflow. A data error waits for an operator like any database step (the notice may be a
   * charge to refund, so it is never dropped); a cancelled run puts the notice back for the settle.
   */
  private void applyNotice(Notice received) {
    try {
      Notice n = received;
      if (!n.recorded() && Workflow.getVersion("signal-arrivals", Workflow.DEFAULT_VERSION, 1) == 1) {
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

  private CommandResult rejected() {
    OrderStatus shown = order.status();
    if (shown == OrderStatus.CREATED && command == Command.PAY) shown = OrderStatus.PAYING;
    if (shown == OrderStatus.CREATED && command == Command.CANCEL) shown = OrderStatus.CANCELLED;
    return new CommandResult(CommandOutcome.REJECTED, shown, order.version());
  }

  private ChannelAnswer charge() {
    try {
      return boundedCharge.charge(order.orderId(), order.amount());
    } catch (ActivityFailure e) {
      if (e.getCause() instanceof TimeoutFailure t
          && t.getTimeoutType() == TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START) {
        // no activity worker took it within the bound: the request never left
        log.warn("order {} charge never started within {}: not charged", order.orderId(), CHARGE_START_BOUND);
        return CHARGE_NEVER_STARTED;
      }
      // the worker died or the activity timed out: the charge may have happened
      return ChannelAnswer.unknown("activity failure");
    }
  }

  /** UNKNOWN converges by query; NOT_FOUND is not "not charged": close, then act on the close. */
  private void converge() {
    lock.lock();
    try {
      if (order.status() != OrderStatus.UNKNOWN) return;
      ChannelAnswer answer = safe(() -> channel.query(order.orderId()));
      String cause = "query";
      if (answer.result() == ChannelResult.NOT_FOUND) {
        answer = safe(() -> channel.close(order.orderId()));
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
      channel.refund(order.orderId(), order.amount());
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
    awaitOrTimeout(Duration.ofSeconds(waitSeconds), () -> !notices.isEmpty());
  }

  private ChannelAnswer safe(java.util.function.Supplier<ChannelAnswer> call) {
    try {
      return call.get();
    } catch (ActivityFailure e) {
      return ChannelAnswer.unknown("activity failure");
    }
  }

  private void locked(java.util.function.Supplier<Step> action) {
    lock.lock();
    try {
      track(action.get());
    } finally {
      lock.unlock();
    }
  }

  private boolean awaitForever(Supplier<Boolean> condition) {
    awaitUnlessCancelled(condition);
    return true;
  }

  /**
   * Workflow.await with a timeout, whose timer is cancelled when the condition wins: the SDK leaves
   * it running, so a storm of wake-ups (callbacks) would pile timers up in the history.
   * True when the condition became true, false when the time ran out.
   */
  private boolean awaitOrTimeout(Duration timeout, Supplier<Boolean> condition) {
    // asked before the condition: the old branch starts a timer even when the condition holds
    if (Workflow.getVersion(V_TIMER_CANCEL, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
      return Workflow.await(timeout, condition);
    }
    if (condition.get()) return true;
    CompletablePromise<RuntimeException> ended = Workflow.newPromise();
    CancellationScope timer = startTimer(timeout, ended);
    Workflow.await(() -> ended.isCompleted() || condition.get());
    if (ended.isCompleted()) {
      if (ended.get() != null) throw ended.get(); // CanceledFailure: the run itself was cancelled
      return false;
    }
    timer.cancel();
    return true;
  }

  /** Workflow.await that also wakes, with CanceledFailure, when the run is cancelled. */
  private void awaitUnlessCancelled(Supplier<Boolean> condition) {
    CancellationScope scope = CancellationScope.current();
    Workflow.await(() -> condition.get() || scope.isCancelRequested());
    if (condition.get()) return;
    // a cancel came: the version is asked here, the only place its branches differ (neither waits with a command)
    if (Workflow.getVersion(V_WORKFLOW_CANCEL, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
      Workflow.await(condition);
      return;
    }
    throw new CanceledFailure("run cancelled");
  }

  /**
   * One database step. Transient errors are retried by the activity's retry policy; a data error
   * no retry fixes leaves the order where it is (never FAILED: the channel may have charged),
   * flags it for an operator and is tried again slowly, so a repaired row lets it go on.
   */
  private <T> T step(String what, Function<OrderActivities, T> call) {
    long waitMillis = 60_000;
    boolean flagged = false;
    while (true) {
      try {
        T result = dbCall(what, call);
        if (flagged) clearAttention(); // only the step that raised the flag clears it
        return result;
      } catch (ActivityFailure e) {
        if (e.getCause() instanceof CanceledFailure && CancellationScope.current().isCancelRequested()
            && Workflow.getVersion(V_WORKFLOW_CANCEL, Workflow.DEFAULT_VERSION, 1) >= 1) {
          // the run was cancelled while the step ran: settle the order (run()), do not fail the run
          throw new CanceledFailure("run cancelled during " + what);
        }
        if (!isDataError(e)
            || Workflow.getVersion(V_DATA_ERROR, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
          throw e;
        }
        flagAttention(what, e);
        flagged = true;
        Workflow.sleep(Duration.ofMillis(waitMillis));
        waitMillis = Math.min(waitMillis * 2, 3_600_000);
      }
    }
  }

  private static boolean isDataError(ActivityFailure e) {
    return e.getCause() instanceof ApplicationFailure af && OrderActivities.DATA_ERROR.equals(af.getType());
  }

  private void flagAttention(String what, ActivityFailure e) {
    String cause = e.getCause() == null ? e.getMessage() : e.getCause().getMessage();
    attention = OrderActivities.DATA_ERROR + " in " + what + ": " + cause;
    lastEffect = "ATTENTION " + attention;
    log.error("order {} needs an operator: {}", order == null ? start.orderId() : order.orderId(), attention);
    Workflow.upsertTypedSearchAttributes(ORDER_ATTENTION.valueSet(OrderActivities.DATA_ERROR));
    Workflow.setCurrentDetails((order == null ? "" : order.orderId() + " " + order.status() + " · ") + lastEffect);
  }

  private void clearAttention() {
    attention = null;
    Workflow.upsertTypedSearchAttributes(ORDER_ATTENTION.valueUnset());
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
      boolean lean = leanHistory();
      if (before == null && !lean) {
        Workflow.upsertMemo(Map.of("OrderId", order.orderId()));
      }
      if (before == null && lean) {
        // the start carries Tenant and, from a create, Sku: upsert only what it did not set
        List<SearchAttributeUpdate<?>> updates = new ArrayList<>(List.of(
            ORDER_ID.valueSet(order.orderId()), ORDER_STATUS.valueSet(order.status().name())));
        SearchAttributes atStart = Workflow.getTypedSearchAttributes();
        if (!order.sku().equals(atStart.get(SKU))) updates.add(SKU.valueSet(order.sku()));
        if (!order.tenant().equals(atStart.get(TENANT))) updates.add(TENANT.valueSet(order.tenant()));
        Workflow.upsertTypedSearchAttributes(updates.toArray(SearchAttributeUpdate<?>[]::new));
      } else if (!lean) {
        Workflow.upsertTypedSearchAttributes(
            ORDER_ID.valueSet(order.orderId()),
            ORDER_STATUS.valueSet(order.status().name()),
            SKU.valueSet(order.sku()),
            TENANT.valueSet(order.tenant()));
      } else {
        Workflow.upsertTypedSearchAttributes(ORDER_STATUS.valueSet(order.status().name()));
      }
    }
    if (order != null) {
      Workflow.setCurrentDetails(
          order.orderId() + " " + order.status() + " v" + order.version() + " · last effect: " + lastEffect);
    }
    return step;
  }
}
