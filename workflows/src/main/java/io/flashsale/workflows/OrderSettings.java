package io.flashsale.workflows;

import java.time.Duration;

/**
 * Timings the workflow runs by. Passed in the start arguments so the workflow stays
 * deterministic and every run replays with the values it started with.
 */
public record OrderSettings(
    long reservationTtlMillis,
    long unknownFirstQueryMillis,
    long unknownQueryCapMillis,
    long lateNoticeWindowMillis,
    int continueAsNewAfterEvents,
    /*
     * The database steps run as local activities, in the worker that runs the workflow: one
     * workflow task per step instead of an activity task and two workflow tasks. Off for a
     * deployment whose database steps run in separate activity workers, and in every run started
     * before the field existed (absent in its input: false).
     */
    boolean localDatabaseSteps) {

  /** Local database steps on. */
  public OrderSettings(long reservationTtlMillis, long unknownFirstQueryMillis, long unknownQueryCapMillis,
      long lateNoticeWindowMillis, int continueAsNewAfterEvents) {
    this(reservationTtlMillis, unknownFirstQueryMillis, unknownQueryCapMillis, lateNoticeWindowMillis,
        continueAsNewAfterEvents, true);
  }

  public static OrderSettings defaults() {
    return new OrderSettings(60_000, 1_000, 60_000, 600_000, 4_000);
  }

  public Duration reservationTtl() {
    return Duration.ofMillis(reservationTtlMillis);
  }

  public Duration lateNoticeWindow() {
    return Duration.ofMillis(lateNoticeWindowMillis);
  }
}
