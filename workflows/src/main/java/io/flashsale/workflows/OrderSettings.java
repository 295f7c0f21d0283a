package io.flashsale.workflows;

import java.time.Duration;

/**
 * Timings the workflow runs by. Passed in the start arguments so the workflow stays
 * deterministic and every run replays with the values it started with. A field a run's input
 * lacks (started before the field existed) reads as null, false or 0.
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
    boolean localDatabaseSteps,
    /*
     * The task queue of the channel's activities (charge, query, close, refund), polled by workers
     * of its own, so a backlog of database steps never delays a charge past its start bound
     * (docs/DESIGN.md §Every order ends). Null: the workflow's own queue.
     */
    String channelTaskQueue,
    /*
     * How long an UNKNOWN or REFUNDING order's first convergence round at the channel may take
     * before the order raises OrderAttention (UNKNOWN_AGED, REFUND_AGED); later rounds last
     * LATER_ROUND_FACTOR times as long. 0: the default, 30 minutes.
     */
    long attentionAfterMillis) {

  /** Default of attentionAfterMillis. */
  public static final long DEFAULT_ATTENTION_AFTER_MILLIS = 30 * 60_000L;
  /** Rounds after the first last this many times as long (at most a day). */
  static final int LATER_ROUND_FACTOR = 8;

  /** Local database steps on, the channel on the workflow's queue, the default attention bound. */
  public OrderSettings(long reservationTtlMillis, long unknownFirstQueryMillis, long unknownQueryCapMillis,
      long lateNoticeWindowMillis, int continueAsNewAfterEvents) {
    this(reservationTtlMillis, unknownFirstQueryMillis, unknownQueryCapMillis, lateNoticeWindowMillis,
        continueAsNewAfterEvents, true);
  }

  /** The channel on the workflow's queue, the default attention bound. */
  public OrderSettings(long reservationTtlMillis, long unknownFirstQueryMillis, long unknownQueryCapMillis,
      long lateNoticeWindowMillis, int continueAsNewAfterEvents, boolean localDatabaseSteps) {
    this(reservationTtlMillis, unknownFirstQueryMillis, unknownQueryCapMillis, lateNoticeWindowMillis,
        continueAsNewAfterEvents, localDatabaseSteps, null, DEFAULT_ATTENTION_AFTER_MILLIS);
  }

  public static OrderSettings defaults() {
    return new OrderSettings(60_000, 1_000, 60_000, 600_000, 4_000);
  }

  public OrderSettings withChannelTaskQueue(String queue) {
    return new OrderSettings(reservationTtlMillis, unknownFirstQueryMillis, unknownQueryCapMillis,
        lateNoticeWindowMillis, continueAsNewAfterEvents, localDatabaseSteps, queue, attentionAfterMillis);
  }

  public OrderSettings withAttentionAfter(Duration after) {
    return new OrderSettings(reservationTtlMillis, unknownFirstQueryMillis, unknownQueryCapMillis,
        lateNoticeWindowMillis, continueAsNewAfterEvents, localDatabaseSteps, channelTaskQueue, after.toMillis());
  }

  public Duration reservationTtl() {
    return Duration.ofMillis(reservationTtlMillis);
  }

  public Duration lateNoticeWindow() {
    return Duration.ofMillis(lateNoticeWindowMillis);
  }

  /** How long convergence round number {@code round} (0 first) may take at the channel. */
  public Duration roundBound(int round) {
    long first = attentionAfterMillis > 0 ? attentionAfterMillis : DEFAULT_ATTENTION_AFTER_MILLIS;
    long bound = round == 0 ? first : Math.min(Duration.ofDays(1).toMillis(), first * LATER_ROUND_FACTOR);
    return Duration.ofMillis(bound);
  }
}
