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

  /**
   * A success from the channel changes nothing any more: the order is paid, or its money is on its
   * way back ({@code PaymentRules.onCharged} answers {@code DUPLICATE <status>}). No status leaves
   * this set, so a callback may be answered from it at arrival (docs/DESIGN.md §Callbacks).
   */
  public boolean isSettledForACharge() {
    return this == PAID || this == REFUNDING || this == REFUNDED;
  }
}
