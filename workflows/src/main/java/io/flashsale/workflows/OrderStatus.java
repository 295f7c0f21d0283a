package io.flashsale.workflows;

/** The order state machine (docs/DESIGN.md §State machine). Terminal states emit an outbox event. */
public enum OrderStatus {
  CREATED, PAYING, UNKNOWN, PAID, FAILED, CANCELLED, REFUNDING, REFUNDED;

  public boolean isTerminal() {
    return this == PAID || this == FAILED || this == CANCELLED || this == REFUNDED;
  }

  /** A payment may be in flight: reconciliation cannot judge these yet. */
  public boolean isPending() {
    return this == PAYING || this == UNKNOWN || this == REFUNDING;
  }
}
