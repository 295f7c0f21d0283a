package io.flashsale.domain;

/**
 * What makes a {@code paymentNotification} signal an operator's (docs/DESIGN.md §Trust
 * boundaries): {@code operator_proof}, base64url(HMAC-SHA256 under the operator credential of
 * "order|notify_id|kind|amount|txn"). A notice the API recorded needs none (the channel's
 * signature was checked and the arrival row is matched); a signal without a valid proof is
 * recorded as REJECTED and changes nothing, so reaching the engine is not enough to settle an order.
 */
public final class OperatorProof {
  private OperatorProof() {}

  /** The proof of a notice for an order under the operator credential. */
  public static String of(String key, String orderId, String notifyId, String kind, long amount, String txn) {
    return Hmac.sign(Hmac.utf8(key), claims(orderId, notifyId, kind, amount, txn));
  }

  /** Whether the notice carries the proof for this order under the key (constant-time); false without a key. */
  public static boolean verifies(String key, String orderId, Notice n) {
    if (key == null || key.isBlank()) return false;
    return Hmac.verifies(Hmac.utf8(key), claims(orderId, n.notifyId(), n.kind(), n.amount(), n.txn()), n.operatorProof());
  }

  private static byte[] claims(String orderId, String notifyId, String kind, long amount, String txn) {
    return Hmac.utf8(orderId + "|" + notifyId + "|" + kind + "|" + amount + "|" + (txn == null ? "" : txn));
  }
}
