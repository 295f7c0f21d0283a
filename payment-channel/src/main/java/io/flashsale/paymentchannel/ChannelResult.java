package io.flashsale.paymentchannel;

/**
 * What the channel said about a merchant order (docs/DESIGN.md §Channel contract). UNKNOWN is not
 * a channel answer but its absence: a timeout cannot tell "never arrived" from "done, reply lost".
 */
public enum ChannelResult {
  CHARGED,
  DECLINED,
  CLOSED,
  REFUNDED,
  NOT_FOUND,
  UNKNOWN;

  /** A word from the wire; anything this contract does not define reads as UNKNOWN. */
  public static ChannelResult parse(String word) {
    if (word == null) return UNKNOWN;
    for (ChannelResult r : values()) {
      if (r.name().equals(word)) return r;
    }
    return UNKNOWN;
  }
}
