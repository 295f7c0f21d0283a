package io.flashsale.paymentchannel;

/** One money movement in the channel's ledger, as reconciliation reads it. */
public record StatementRow(String merchantOrder, Movement movement, long amount) {
  public enum Movement {
    CHARGE,
    REFUND,
    /** A row type this contract does not know; reconciliation ignores it. */
    OTHER
  }
}
