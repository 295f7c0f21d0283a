package io.flashsale.domain;

/**
 * The order state machine (docs/DESIGN.md §State machine). Every status states each of its flags
 * in its constructor, so a new status does not compile until all three are decided. Terminal
 * states emit an outbox event.
 */
public enum OrderStatus {
  //        terminal, pending, settledForACharge
  CREATED(  false,    false,   false),
  PAYING(   false,    true,    false),
  UNKNOWN(  false,    true,    false),
  PAID(     true,     false,   true),
  FAILED(   true,     false,   false),
  CANCELLED(true,     false,   false),
  REFUNDING(false,    true,    true),
  REFUNDED( true,     false,   true);

  private final boolean terminal;
  private final boolean pending;
  private final boolean settledForACharge;

  OrderStatus(boolean terminal, boolean pending, boolean settledForACharge) {
    this.terminal = terminal;
    this.pending = pending;
    this.settledForACharge = settledForACharge;
  }

  /**
   * Moving into this status writes the outbox event {@code ORDER_<STATUS>}, and the workflow then
   * only waits for late notices. Not final for FAILED and CANCELLED: a later success refunds.
   */
  public boolean isTerminal() {
    return terminal;
  }

  /** A payment may be in flight: reconciliation cannot judge these yet. */
  public boolean isPending() {
    return pending;
  }

  /**
   * A success from the channel changes nothing any more: the order is paid, or its money is on its
   * way back ({@code PaymentRules.onCharged} answers {@code DUPLICATE <status>}). No status leaves
   * this set, so a callback may be answered from it at arrival (docs/DESIGN.md §Callbacks).
   */
  public boolean isSettledForACharge() {
    return settledForACharge;
  }
}
