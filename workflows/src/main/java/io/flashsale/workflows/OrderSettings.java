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
    int continueAsNewAfterEvents) {

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
