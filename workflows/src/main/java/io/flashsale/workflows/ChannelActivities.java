package io.flashsale.workflows;

import io.flashsale.domain.ChannelAnswer;
import io.temporal.activity.ActivityInterface;

/** Calls to the payment channel. A missing answer is a value (UNKNOWN), never an exception. */
@ActivityInterface
public interface ChannelActivities {

  /** Failure type of a refund the channel definitely refused (not retried: the same request cannot help). */
  String REFUND_REFUSED = "REFUND_REFUSED";

  ChannelAnswer charge(String orderId, long amount);

  ChannelAnswer query(String orderId);

  ChannelAnswer close(String orderId);

  /** A convergence round's answer: definite, and whether a close (after NOT_FOUND) gave it. */
  record Converged(ChannelAnswer answer, boolean byClose) {}

  /**
   * Query; on NOT_FOUND close first. A definite answer returns; no answer throws a retryable
   * failure, so the server retries it with the round's backoff and adds no history while it does.
   */
  Converged converge(String orderId);

  /** Refund with the fixed key rf-&lt;orderId&gt;; throws on no answer so Temporal retries it. */
  ChannelAnswer refund(String orderId, long amount);
}
