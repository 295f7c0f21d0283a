package io.flashsale.workflows;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.domain.OrderView;
import io.flashsale.paymentchannel.ChannelResult;
import io.temporal.activity.ActivityCancellationType;
import io.temporal.activity.ActivityOptions;
import io.temporal.api.enums.v1.TimeoutType;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.TimeoutFailure;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The order's calls to the payment channel, with their options. A missing answer is the value
 * UNKNOWN, which the order converges by query, never an exception; only a refund round throws.
 */
final class ChannelSteps {
  private static final Logger log = Workflow.getLogger(OrderWorkflowImpl.class);

  /**
   * How long a charge may wait for an activity worker. Past it the charge never started: no
   * request left, so the order is definitely not charged (the schedule-to-start timeout only
   * fires for a task no worker took, and the charge has one attempt).
   */
  static final Duration CHARGE_START_BOUND = Duration.ofSeconds(30);

  /** What a charge that never started is: no request left, so nothing can land (rule 3's CLOSED). */
  static final ChannelAnswer CHARGE_NEVER_STARTED = new ChannelAnswer(ChannelResult.CLOSED, null, "never started");

  /**
   * The channel's options. Charge, query and close get one attempt: no answer is the value UNKNOWN,
   * which the order converges by query, not a retry. The charge must start within
   * CHARGE_START_BOUND, or it never started. Runs before owned-deadlines query, close and refund
   * with these (a refund round of five); newer runs converge and refund in rounds ({@link #round}).
   */
  private static final ActivityOptions ONE_ATTEMPT =
      ActivityOptions.newBuilder()
          .setStartToCloseTimeout(Duration.ofSeconds(10))
          .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
          .build();

  private static final ActivityOptions BOUNDED_CHARGE =
      ActivityOptions.newBuilder(ONE_ATTEMPT).setScheduleToStartTimeout(CHARGE_START_BOUND).build();

  private static final ActivityOptions REFUND_ROUND =
      ActivityOptions.newBuilder()
          .setStartToCloseTimeout(Duration.ofSeconds(10))
          .setRetryOptions(
              RetryOptions.newBuilder()
                  .setInitialInterval(Duration.ofSeconds(1))
                  .setBackoffCoefficient(2)
                  .setMaximumInterval(Duration.ofSeconds(30))
                  .setMaximumAttempts(5)
                  .build())
          .build();

  private final OrderSettings settings;

  ChannelSteps(OrderSettings settings) {
    this.settings = settings;
  }

  /**
   * A stub for one call, whose summary the engine keeps with the scheduled activity: the Web UI
   * and {@code temporal workflow show} read "charge ord-… 1990", not a bare activity type
   * (docs/DESIGN.md §Readable histories). It goes to the channel's own task queue when the run's
   * settings name one.
   */
  private ChannelActivities channel(ActivityOptions options, String summary) {
    ActivityOptions.Builder b = ActivityOptions.newBuilder(options).setSummary(summary);
    if (settings.channelTaskQueue() != null) b.setTaskQueue(settings.channelTaskQueue());
    return Workflow.newActivityStub(ChannelActivities.class, b.build());
  }

  /**
   * A round at the channel: one activity whose attempts the server retries from {@code initial}
   * doubling up to the order's cap (unknownQueryCap), adding no history meanwhile, until a
   * definite answer, a definite refusal or the round's bound.
   */
  private ActivityOptions round(Duration bound, long initialMillis) {
    // the engine refuses a maximum below the initial interval
    long initial = Math.max(1, initialMillis);
    long maximum = Math.max(initial, settings.unknownQueryCapMillis());
    return ActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofSeconds(10))
        .setScheduleToCloseTimeout(bound)
        .setCancellationType(ActivityCancellationType.TRY_CANCEL)
        .setRetryOptions(RetryOptions.newBuilder()
            .setInitialInterval(Duration.ofMillis(initial))
            .setBackoffCoefficient(2)
            .setMaximumInterval(Duration.ofMillis(maximum))
            .build())
        .build();
  }

  /**
   * After the first query's delay the next queries wait twice it, doubling, at most the cap: the
   * backoff of the timer-driven queries before rounds.
   */
  private long queryRetryMillis() {
    return Math.min(2 * settings.unknownFirstQueryMillis(), settings.unknownQueryCapMillis());
  }

  /** A refund is retried from 1 s (the reply of a refund that did land is answered again by key). */
  private static final long REFUND_RETRY_MILLIS = 1_000;

  /** A convergence round for an UNKNOWN order: query, close first on NOT_FOUND, until definite. */
  ChannelRound<ChannelActivities.Converged> convergeRound(String orderId, int round) {
    Duration bound = settings.roundBound(round);
    ChannelActivities stub = channel(round(bound, queryRetryMillis()), "query the channel for UNKNOWN " + orderId + " (round "
        + (round + 1) + ", up to " + bound.toMinutes() + " min)");
    return ChannelRound.start(() -> stub.converge(orderId));
  }

  /** A refund round with the order's refund key, until confirmed, refused or the round's bound. */
  ChannelRound<ChannelAnswer> refundRound(OrderView order, int round) {
    Duration bound = settings.roundBound(round);
    ChannelActivities stub = channel(round(bound, REFUND_RETRY_MILLIS), "refund " + order.orderId() + " " + order.amount() + " (round "
        + (round + 1) + ", up to " + bound.toMinutes() + " min)");
    return ChannelRound.start(() -> stub.refund(order.orderId(), order.amount()));
  }

  /** The charge's answer: UNKNOWN when it may have happened, CHARGE_NEVER_STARTED when it cannot have. */
  ChannelAnswer charge(OrderView order) {
    try {
      return channel(BOUNDED_CHARGE, "charge " + order.orderId() + " " + order.amount())
          .charge(order.orderId(), order.amount());
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

  ChannelAnswer query(String orderId) {
    return safe(() -> channel(ONE_ATTEMPT, "query the channel for " + orderId).query(orderId));
  }

  ChannelAnswer close(String orderId) {
    return safe(() -> channel(ONE_ATTEMPT, "close " + orderId + " at the channel").close(orderId));
  }

  /** One round of refund attempts with the order's refund key; throws when the round got no answer. */
  void refund(OrderView order) {
    channel(REFUND_ROUND, "refund " + order.orderId() + " " + order.amount()).refund(order.orderId(), order.amount());
  }

  private static ChannelAnswer safe(Supplier<ChannelAnswer> call) {
    try {
      return call.get();
    } catch (ActivityFailure e) {
      return ChannelAnswer.unknown("activity failure");
    }
  }
}
