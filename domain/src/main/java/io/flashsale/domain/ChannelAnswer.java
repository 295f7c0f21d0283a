package io.flashsale.domain;

import io.flashsale.paymentchannel.ChannelResult;

/**
 * The channel's answer to charge / query / close / refund as the workflow records it: a typed
 * {@link ChannelResult} (UNKNOWN when no definite answer came back: timeout, IO error), the
 * channel's transaction id, and a detail for logs only.
 */
public record ChannelAnswer(ChannelResult result, String txn, String detail) {

  public static ChannelAnswer unknown(String detail) {
    return new ChannelAnswer(ChannelResult.UNKNOWN, null, detail);
  }

  public boolean definite() {
    return result != ChannelResult.UNKNOWN;
  }
}
