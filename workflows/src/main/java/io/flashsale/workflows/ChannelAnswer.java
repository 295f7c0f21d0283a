package io.flashsale.workflows;

/**
 * The channel's answer to charge / query / close: CHARGED, DECLINED, CLOSED, REFUNDED,
 * NOT_FOUND, or UNKNOWN when no definite answer came back (timeout, IO error).
 */
public record ChannelAnswer(String result, String txn, String detail) {
  public static final String CHARGED = "CHARGED";
  public static final String DECLINED = "DECLINED";
  public static final String CLOSED = "CLOSED";
  public static final String REFUNDED = "REFUNDED";
  public static final String NOT_FOUND = "NOT_FOUND";
  public static final String UNKNOWN = "UNKNOWN";

  public boolean definite() {
    return !UNKNOWN.equals(result);
  }
}
