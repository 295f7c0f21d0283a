package io.flashsale.domain;

/**
 * Why an order needs an operator: the value of its {@code OrderAttention} search attribute and of
 * {@code orders.attention} (docs/DESIGN.md §Every order ends). An order that converges on its own
 * clears it; one that cannot raises it and keeps trying.
 */
public enum Attention {
  /** A database step failed with a data error no retry fixes (search attribute value {@code DataError}). */
  DATA_ERROR("DataError"),
  /** The channel definitely refused the refund (not charged, another amount, another key): money may be kept. */
  REFUND_REFUSED("REFUND_REFUSED"),
  /** The refund got no confirmation for a whole round (the channel is down or never answers). */
  REFUND_AGED("REFUND_AGED"),
  /** An UNKNOWN order got no definite answer from the channel for a whole round. */
  UNKNOWN_AGED("UNKNOWN_AGED");

  private final String value;

  Attention(String value) {
    this.value = value;
  }

  /** The stored and searchable value. */
  public String value() {
    return value;
  }

  /** The reason a stored value names, or null for one this version does not know. */
  public static Attention of(String value) {
    for (Attention a : values()) {
      if (a.value.equals(value)) return a;
    }
    return null;
  }
}
