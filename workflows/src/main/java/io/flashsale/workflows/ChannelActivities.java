package io.flashsale.workflows;

import io.flashsale.domain.ChannelAnswer;
import io.temporal.activity.ActivityInterface;

/** Calls to the payment channel. A missing answer is a value (UNKNOWN), never an exception. */
@ActivityInterface
public interface ChannelActivities {

  ChannelAnswer charge(String orderId, long amount);

  ChannelAnswer query(String orderId);

  ChannelAnswer close(String orderId);

  /** Refund with the fixed key rf-&lt;orderId&gt;; throws on no answer so Temporal retries it. */
  ChannelAnswer refund(String orderId, long amount);
}
