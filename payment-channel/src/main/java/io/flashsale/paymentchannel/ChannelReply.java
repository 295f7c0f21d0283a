package io.flashsale.paymentchannel;

/**
 * One reply of the channel. {@code refused} marks a definite refusal of the request itself (the
 * channel answered 4xx: not charged, another amount, refunded under another key), which no retry
 * of the same request can change; {@code detail} is for logs only, never for decisions.
 */
public record ChannelReply(ChannelResult result, String txn, String detail, boolean refused) {

  public static ChannelReply unknown(String detail) {
    return new ChannelReply(ChannelResult.UNKNOWN, null, detail, false);
  }

  public boolean definite() {
    return result != ChannelResult.UNKNOWN;
  }
}
