package io.flashsale.workflows;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.common.SearchAttributeKey;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowLock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
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

  private static final Logger log = Workflow.getLogger(OrderWorkflowImpl.class);

  private final OrderActivities db =
      Workflow.newActivityStub(
          OrderActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofSeconds(15))
              .setRetryOptions(
                  RetryOptions.newBuilder()
                      .setInitialInterval(Duration.ofMillis(100))
                      .setBackoffCoefficient(2)
                      .setMaximumInterval(Duration.ofSeconds(5))
                      .setDoNotRetry(IllegalArgumentException.class.getName())
                      .build())
              .build());

  /** Charge, query and close: one attempt; no answer is the value UNKNOWN, not a retry. */
  private final ChannelActivities channel =
      Workflow.newActivityStub(
          ChannelActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofSeconds(10))
              .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
              .build());

  /** Refunds retry with the same refund key until the channel answers. */
  private final ChannelActivities refunds =
      Workflow.newActivityStub(
          ChannelActivities.class,
          ActivityOptions.newBuilder()
              .setStartToCloseTimeout(Duration.ofSeconds(10))
              .setRetryOptions(
                  RetryOptions.newBuilder()
                      .setInitialInterval(Duration.ofSeconds(1))
                      .setBackoffCoefficient(2)
                      .setMaximumInterval(Duration.ofSeconds(30))
                      .setMaximumAttempts(5)
                      .build())
              .build());

  private final WorkflowLock lock = Workflow.newWorkflowLock();
  private final Deque<Notice> notices = new ArrayDeque<>();
  private final List<String> timeline = new ArrayList<>();

  private OrderStart start;
  private OrderView order;
  private boolean createSettled;
  /** PAY or CANCEL once one of them was accepted; a second command is rejected at once. */
  private String command;
  private String lastEffect;
  private int refundRounds;
  /** Operator signals recorded by this run (their arrival refs). */
  private int signalArrivals;

  @Override
  public void run(OrderStart start) {
    this.start = start;
    if (start.pendingNotices() != null) notices.addAll(start.pendingNotices());
    if (start.timeline() != null) timeline.addAll(start.timeline());
    OrderSettings settings = start.settings() == null ? OrderSettings.defaults() : start.settings();
    if (start.orderId() != null) {
      lock.lock();
      try {
        track(new Step("LOADED", db.load(start.orderId()), List.of()));
        if (order.status() == OrderStatus.PAYING
            && Workflow.getVersion("resume-paying", Workflow.DEFAULT_VERSION, 1) == 1) {
          // a repaired order: the run that made the charge is gone with its answer, so it is UNKNOWN
          track(db.applyChannelAnswer(order.orderId(), new ChannelAnswer(ChannelAnswer.UNKNOWN, null, "run lost"),
              "repair: charge answer lost"));
        }
      } finally {
        lock.unlock();
      }
    }
    Workflow.await(() -> order != null || (createSettled && Workflow.isEveryHandlerFinished()));
    if (order == null) {
      return; // SOLD_OUT / USER_LIMIT / KEY_REUSED: no order row, nothing to run
    }

    Long carried = start.reservationExpiresAt();
    long expiryAt = carried == null ? Workflow.currentTimeMillis() + settings.reservationTtlMillis() : carried;
    boolean reservationExpired = carried != null && carried < 0;
    long queryAt = 0;
    long backoff = settings.unknownFirstQueryMillis();

    while (true) {
      if (historyTooLong() && Workflow.isEveryHandlerFinished()) {
        // no update running: the new run reloads the order and takes over the queued notices
        Workflow.continueAsNew(new OrderStart(start.tenant(), start.subject(), start.requestKey(), order.orderId(),
            settings, reservationExpired ? -1L : expiryAt, List.copyOf(notices), List.copyOf(timeline)));
      }
      if (!notices.isEmpty()) {
        applyNotice(notices.poll());
        continue;
      }
      OrderStatus status = order.status();
      if (status == OrderStatus.REFUNDING) {
        refund();
        continue;
      }
      if (status.isTerminal()) {
        // a timer that fires in the same task as a signal still leaves the notice queued: keep going
        Workflow.await(settings.lateNoticeWindow(), () -> !notices.isEmpty());
        if (!notices.isEmpty()) continue;
        Workflow.await(Workflow::isEveryHandlerFinished);
        if (notices.isEmpty()) break;
        continue;
      }
      if (status == OrderStatus.UNKNOWN && queryAt == 0) {
        queryAt = Workflow.currentTimeMillis() + backoff;
      }
      long now = Workflow.currentTimeMillis();
      long wakeAt = Long.MAX_VALUE;
      if (!reservationExpired) wakeAt = expiryAt;
      if (status == OrderStatus.UNKNOWN) wakeAt = Math.min(wakeAt, queryAt);
      int seenVersion = order.version();
      boolean woke =
          wakeAt == Long.MAX_VALUE
              ? awaitForever(() -> !notices.isEmpty() || order.version() != seenVersion)
              : Workflow.await(
                  Duration.ofMillis(Math.max(1, wakeAt - now)),
                  () -> !notices.isEmpty() || order.version() != seenVersion);
      if (woke) {
        continue;
      }
      now = Workflow.currentTimeMillis();
      if (!reservationExpired && now >= expiryAt) {
        reservationExpired = true;
        locked(() -> db.expireReservation(order.orderId()));
      }
      if (order.status() == OrderStatus.UNKNOWN && now >= queryAt) {
        converge();
        backoff = Math.min(backoff * 2, settings.unknownQueryCapMillis());
        queryAt = Workflow.currentTimeMillis() + backoff;
      }
    }
  }

  @Override
  public CreateResult create(CreateOrder request) {
    lock.lock();
    try {
      boolean alreadyCreated = order != null;
      CreateResult r = db.reserve(request, Workflow.getInfo().getWorkflowId());
      if (alreadyCreated && CreateResult.CREATED.equals(r.outcome())) {
        r = new CreateResult(CreateResult.REPLAY, r.order(), List.of());
      }
      if (r.order() != null) {
        track(new Step(r.outcome(), r.order(), r.transitions()));
      }
      return r;
    } finally {
      createSettled = true;
      lock.unlock();
    }
  }

  @Override
  public CommandResult pay() {
    awaitLoaded();
    if (order == null) {
      return new CommandResult(CommandResult.REJECTED, null, 0);
    }
    if (order.status() != OrderStatus.CREATED || command != null) {
      return rejected();
    }
    command = "PAY";
    lock.lock();
    try {
      track(db.beginPay(order.orderId()));
      if (order.status() != OrderStatus.PAYING) {
        return rejected(); // a notice or the expiry got there first
      }
      ChannelAnswer answer = charge();
      track(db.applyChannelAnswer(order.orderId(), answer, answer.definite() ? "charge reply" : "charge " + answer.detail()));
      log.info("order {} pay {} -> {}", order.orderId(), answer.result(), order.status());
      return new CommandResult(null, order.status(), order.version());
    } finally {
      lock.unlock();
    }
  }

  @Override
  public CommandResult cancel() {
    awaitLoaded();
    if (order == null) {
      return new CommandResult(CommandResult.REJECTED, null, 0);
    }
    if ("CANCEL".equals(command)) {
      lock.lock(); // wait for the cancel in flight, then answer as a replay
      lock.unlock();
      return order.status() == OrderStatus.CANCELLED
          ? new CommandResult(CommandResult.REPLAY_CANCEL, order.status(), order.version())
          : rejected();
    }
    if (order.status() == OrderStatus.CANCELLED) {
      return new CommandResult(CommandResult.REPLAY_CANCEL, order.status(), order.version());
    }
    if (order.status() != OrderStatus.CREATED || command != null) {
      return rejected();
    }
    command = "CANCEL";
    lock.lock();
    try {
      track(db.cancel(order.orderId(), "cancel"));
      // CANCELLED here is this command's doing, also when a retried activity answered REPLAY_CANCEL
      return order.status() == OrderStatus.CANCELLED
          ? new CommandResult(CommandResult.CANCELLED, order.status(), order.version())
          : rejected();
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

  private boolean historyTooLong() {
    OrderSettings settings = start.settings() == null ? OrderSettings.defaults() : start.settings();
    int limit = settings.continueAsNewAfterEvents() > 0 ? settings.continueAsNewAfterEvents() : 4_000;
    return Workflow.getInfo().isContinueAsNewSuggested() || Workflow.getInfo().getHistoryLength() > limit;
  }

  /** A run started by signal-with-start loads its order first; commands wait for that. */
  private void awaitLoaded() {
    if (start != null && start.orderId() != null) Workflow.await(() -> order != null);
  }

  /** A notice that cannot be applied (bad arrival id, ...) is logged; it never fails the order's workflow. */
  private void applyNotice(Notice received) {
    try {
      Notice n = received;
      if (!n.recorded() && Workflow.getVersion("signal-arrivals", Workflow.DEFAULT_VERSION, 1) == 1) {
        // an operator's signal: no arrival row yet; the ref makes the activity's retries record it once
        signalArrivals++;
        n = db.recordSignalArrival(order.orderId(), n, Workflow.getInfo().getRunId() + "/" + signalArrivals);
        if (n.rejection() != null) {
          lastEffect = "REJECTED";
          log.warn("order {} signal rejected: {}", order.orderId(), n.rejection());
          return;
        }
      }
      Notice arrival = n;
      locked(() -> db.applyNotice(order.orderId(), arrival));
    } catch (ActivityFailure e) {
      log.error("order {} notice {} not applied: {}", order.orderId(), received.notifyId(), e.getMessage());
    }
  }

  private CommandResult rejected() {
    OrderStatus shown = order.status();
    if (shown == OrderStatus.CREATED && "PAY".equals(command)) shown = OrderStatus.PAYING;
    if (shown == OrderStatus.CREATED && "CANCEL".equals(command)) shown = OrderStatus.CANCELLED;
    return new CommandResult(CommandResult.REJECTED, shown, order.version());
  }

  private ChannelAnswer charge() {
    try {
      return channel.charge(order.orderId(), order.amount());
    } catch (ActivityFailure e) {
      // the worker died or the activity timed out: the charge may have happened
      return new ChannelAnswer(ChannelAnswer.UNKNOWN, null, "activity failure");
    }
  }

  /** UNKNOWN converges by query; NOT_FOUND is not "not charged": close, then act on the close. */
  private void converge() {
    lock.lock();
    try {
      if (order.status() != OrderStatus.UNKNOWN) return;
      ChannelAnswer answer = safe(() -> channel.query(order.orderId()));
      String cause = "query";
      if (ChannelAnswer.NOT_FOUND.equals(answer.result())) {
        answer = safe(() -> channel.close(order.orderId()));
        cause = "close";
      }
      if (answer.definite()) {
        track(db.applyChannelAnswer(order.orderId(), answer, cause));
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
      refunds.refund(order.orderId(), order.amount());
      track(db.completeRefund(order.orderId(), "refund reply"));
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
    Workflow.await(Duration.ofSeconds(waitSeconds), () -> !notices.isEmpty());
  }

  private ChannelAnswer safe(java.util.function.Supplier<ChannelAnswer> call) {
    try {
      return call.get();
    } catch (ActivityFailure e) {
      return new ChannelAnswer(ChannelAnswer.UNKNOWN, null, "activity failure");
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

  private static boolean awaitForever(java.util.function.Supplier<Boolean> condition) {
    Workflow.await(condition);
    return true;
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
      if (before == null) {
        Workflow.upsertMemo(Map.of("OrderId", order.orderId()));
      }
      Workflow.upsertTypedSearchAttributes(
          ORDER_ID.valueSet(order.orderId()),
          ORDER_STATUS.valueSet(order.status().name()),
          SKU.valueSet(order.sku()),
          TENANT.valueSet(order.tenant()));
    }
    if (order != null) {
      Workflow.setCurrentDetails(
          order.orderId() + " " + order.status() + " v" + order.version() + " · last effect: " + lastEffect);
    }
    return step;
  }
}
