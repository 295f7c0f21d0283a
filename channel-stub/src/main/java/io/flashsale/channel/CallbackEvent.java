package io.flashsale.channel;

import java.math.BigDecimal;

/** One callback event; every copy and retry of it carries the same notify_id and body. */
record CallbackEvent(
    String notifyId, String merchantOrder, String kind, BigDecimal amount, String txn, String notifyUrl) {

  byte[] body() {
    return Json.write(Json.obj(
        "notify_id", notifyId,
        "merchant_order", merchantOrder,
        "kind", kind,
        "amount", Json.amount(amount),
        "txn", txn));
  }
}
