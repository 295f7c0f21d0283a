package io.flashsale.workflows;

import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.CancellationScope;
import io.temporal.workflow.CompletablePromise;
import io.temporal.workflow.TimerOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

/**
 * The loop's clock and the run's waits. The deadlines: when the reservation expires, when an
 * UNKNOWN order is first queried (every query, with backoff, in runs before owned-deadlines),
 * when a final order's late-notice window closes.
 * Since {@link ChangeIds#LEAN_HISTORY} the loop keeps one timer per absolute deadline, in its own
 * cancellation scope, across wake-ups (docs/DESIGN.md §Workflow design, "The loop").
 */
final class Deadlines {
  private final OrderSettings settings;

  private boolean started;
  private long expiryAt;
  private boolean reservationExpired;
  private long queryAt;
  private long backoff;

  /** The order version whose late-notice window is open, and when that window closes. */
  private int lateWindowVersion;
  private long lateWindowEndsAt;

  /**
   * The loop's timer: its deadline (workflow clock, ms), how it ended (null when it fired, else its
   * failure) and its scope. Started once for a deadline and kept while the loop waits for that
   * deadline, whatever woke the loop meanwhile; so at most one timer runs.
   */
  private long timerAt;
  private CompletablePromise<RuntimeException> timerEnded;
  private CancellationScope timerScope;

  /** Names the order in the timers' summaries (its id once known). */
  private final Supplier<String> orderName;

  Deadlines(OrderSettings settings, Supplier<String> orderName) {
    this.settings = settings;
    this.orderName = orderName;
  }

  /**
   * Sets the clock once, when the loop first starts. carried is the reservation's absolute
   * deadline a continued or resumed run was started with (-1: already expired), or null; an
   * adopted order was reserved in this run's first task, so its reservation runs from the run's start.
   */
  void start(boolean adopted, Long carriedExpiry) {
    if (started) return;
    started = true;
    Long carried = adopted
        ? Long.valueOf(Workflow.getInfo().getRunStartedTimestampMillis() + settings.reservationTtlMillis())
        : carriedExpiry;
    expiryAt = carried == null ? Workflow.currentTimeMillis() + settings.reservationTtlMillis() : carried;
    reservationExpired = carried != null && carried < 0;
    queryAt = 0;
    backoff = settings.unknownFirstQueryMillis();
  }

  /** The reservation's deadline as the next run carries it: -1 when it has expired. */
  long reservationExpiresAt() {
    return reservationExpired ? -1L : expiryAt;
  }

  /**
   * Waits for a change, until the next deadline: the reservation's expiry and, for an UNKNOWN
   * order, the next query. True when something changed, false when the deadline came.
   */
  boolean awaitChangeOrDeadline(boolean unknown, Supplier<Boolean> changed) {
    if (unknown && queryAt == 0) {
      queryAt = Workflow.currentTimeMillis() + backoff;
    }
    long now = Workflow.currentTimeMillis();
    long wakeAt = Long.MAX_VALUE;
    if (!reservationExpired) wakeAt = expiryAt;
    if (unknown) wakeAt = Math.min(wakeAt, queryAt);
    String summary = !reservationExpired && wakeAt == expiryAt
        ? "expire reservation of " + orderName.get() + " at " + at(wakeAt)
        : "query the channel for UNKNOWN " + orderName.get() + " at " + at(wakeAt)
            + " (back-off " + backoff / 1000 + " s)";
    if (ChangeIds.leanHistory()) {
      return awaitUntil(wakeAt, summary, changed);
    }
    return wakeAt == Long.MAX_VALUE
        ? awaitForever(changed)
        : awaitOrTimeout(Duration.ofMillis(Math.max(1, wakeAt - now)), summary, changed);
  }

  /** True once, when the reservation's expiry has come (it is then marked expired). */
  boolean expiryDue(long now) {
    if (reservationExpired || now < expiryAt) return false;
    reservationExpired = true;
    return true;
  }

  /** The next query of an UNKNOWN order is due. */
  boolean queryDue(long now) {
    return now >= queryAt;
  }

  /** A query was made: the next one after the doubled backoff, up to its cap. */
  void queried() {
    backoff = Math.min(backoff * 2, settings.unknownQueryCapMillis());
    queryAt = Workflow.currentTimeMillis() + backoff;
  }

  /**
   * Waits for a notice until a final order's late-notice window closes. Lean: one window per
   * status, so a notice that changes nothing (a duplicate) keeps its deadline and timer; before,
   * the window was armed again by each wake-up (a timer that fires in the same task as a signal
   * still leaves the notice queued: the caller looks again).
   */
  void awaitLateNotice(int orderVersion, Supplier<Boolean> noticed) {
    if (ChangeIds.leanHistory()) {
      if (lateWindowVersion != orderVersion) {
        lateWindowVersion = orderVersion;
        lateWindowEndsAt = Workflow.currentTimeMillis() + settings.lateNoticeWindow().toMillis();
      }
      awaitUntil(lateWindowEndsAt, lateNoticeSummary(lateWindowEndsAt), noticed);
    } else {
      awaitOrTimeout(settings.lateNoticeWindow(),
          lateNoticeSummary(Workflow.currentTimeMillis() + settings.lateNoticeWindow().toMillis()), noticed);
    }
  }

  private String lateNoticeSummary(long endsAt) {
    return "late-notice window of " + orderName.get() + " closes at " + at(endsAt);
  }

  /** A deadline of the workflow clock as an ISO instant, for a timer's summary. */
  static String at(long epochMillis) {
    return Instant.ofEpochMilli(epochMillis).toString();
  }

  /** Waits until the condition holds or the deadline passes; true when the condition won. */
  private boolean awaitUntil(long wakeAt, String summary, Supplier<Boolean> condition) {
    if (condition.get()) return true;
    // another deadline, or a timer of a cancelled run's scope (the settle after the cancel starts its own)
    if (timerScope != null && (timerAt != wakeAt || timerScope.isCancelRequested())) cancelTimer();
    if (wakeAt == Long.MAX_VALUE) return awaitForever(condition);
    if (timerScope == null) {
      // a deadline already past acts at once: a timer would only add events (an adopted create)
      if (wakeAt <= Workflow.currentTimeMillis() && ChangeIds.ownedDeadlines()) return false;
      timerEnded = Workflow.newPromise();
      timerScope = startTimer(Duration.ofMillis(Math.max(1, wakeAt - Workflow.currentTimeMillis())), summary, timerEnded);
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
  void cancelTimer() {
    if (timerScope == null) return;
    timerScope.cancel();
    timerScope = null;
    timerEnded = null;
  }

  /**
   * Workflow.await with a timeout, whose timer is cancelled when the condition wins: the SDK leaves
   * it running, so a storm of wake-ups (callbacks) would pile timers up in the history.
   * True when the condition became true, false when the time ran out. The summary says what the
   * timer waits for (docs/DESIGN.md §Readable histories).
   */
  static boolean awaitOrTimeout(Duration timeout, String summary, Supplier<Boolean> condition) {
    // asked before the condition: the old branch starts a timer even when the condition holds
    if (Workflow.getVersion(ChangeIds.TIMER_CANCEL, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
      return Workflow.await(timeout, condition);
    }
    if (condition.get()) return true;
    CompletablePromise<RuntimeException> ended = Workflow.newPromise();
    CancellationScope timer = startTimer(timeout, summary, ended);
    Workflow.await(() -> ended.isCompleted() || condition.get());
    if (ended.isCompleted()) {
      if (ended.get() != null) throw ended.get(); // CanceledFailure: the run itself was cancelled
      return false;
    }
    timer.cancel();
    return true;
  }

  private static boolean awaitForever(Supplier<Boolean> condition) {
    awaitUnlessCancelled(condition);
    return true;
  }

  /** Workflow.await that also wakes, with CanceledFailure, when the run is cancelled. */
  static void awaitUnlessCancelled(Supplier<Boolean> condition) {
    CancellationScope scope = CancellationScope.current();
    Workflow.await(() -> condition.get() || scope.isCancelRequested());
    if (condition.get()) return;
    // a cancel came: the version is asked here, the only place its branches differ (neither waits with a command)
    if (Workflow.getVersion(ChangeIds.WORKFLOW_CANCEL, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
      Workflow.await(condition);
      return;
    }
    throw new CanceledFailure("run cancelled");
  }

  /**
   * Starts a timer in its own cancellation scope; {@code ended} completes with null when it fires,
   * else with its failure. Completed normally either way, so a timer cancelled here leaves no failed
   * promise behind (the SDK logs each one at eviction).
   */
  private static CancellationScope startTimer(Duration in, String summary, CompletablePromise<RuntimeException> ended) {
    TimerOptions options = TimerOptions.newBuilder().setSummary(summary).build();
    CancellationScope scope = Workflow.newCancellationScope(() -> Workflow.newTimer(in, options).handle((fired, failure) -> {
      ended.complete(failure);
      return null;
    }));
    scope.run();
    return scope;
  }
}
