package io.flashsale.channel;

import java.math.BigDecimal;

/** Mutable state of one merchant order; only touched under the {@link Ledger} lock. */
final class OrderRecord {
  static final String CHARGED = "CHARGED";
  static final String DECLINED = "DECLINED";
  static final String CLOSED = "CLOSED";
  static final String REFUNDED = "REFUNDED";

  final String merchantOrder;
  /** Null for an order that was closed before any charge. */
  final BigDecimal amount;
  final String notifyUrl;
  /** The answer of the original charge (CHARGED or DECLINED); null if closed before any charge. */
  final String chargeResult;
  final String txn;
  String status;
  String refundKey;
  String refundId;

  private OrderRecord(String merchantOrder, BigDecimal amount, String notifyUrl, String chargeResult, String txn,
      String status) {
    this.merchantOrder = merchantOrder;
    this.amount = amount;
    this.notifyUrl = notifyUrl;
    this.chargeResult = chargeResult;
    this.txn = txn;
    this.status = status;
  }

  static OrderRecord charged(String mo, BigDecimal amount, String notifyUrl, String result, String txn) {
    return new OrderRecord(mo, amount, notifyUrl, result, txn, result);
  }

  static OrderRecord closedBeforeCharge(String mo) {
    return new OrderRecord(mo, null, null, null, null, CLOSED);
  }

  boolean closedBeforeCharge() {
    return chargeResult == null;
  }
}
