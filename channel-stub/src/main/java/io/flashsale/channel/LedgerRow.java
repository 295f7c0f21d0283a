package io.flashsale.channel;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;

/** A statement row: money that actually moved (CHARGE or REFUND). */
record LedgerRow(long seq, String type, String merchantOrder, BigDecimal amount, String txn, String refundKey, Instant at) {

  Map<String, Object> toJson() {
    return Json.obj(
        "seq", seq,
        "type", type,
        "merchant_order", merchantOrder,
        "amount", Json.amount(amount),
        "txn", txn,
        "refund_key", refundKey,
        "at", at.toString());
  }
}
