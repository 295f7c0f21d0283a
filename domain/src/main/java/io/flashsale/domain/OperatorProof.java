package io.flashsale.domain;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

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
    return Base64.getUrlEncoder().withoutPadding().encodeToString(mac(key, claims(orderId, notifyId, kind, amount, txn)));
  }

  /** Whether the notice carries the proof for this order under the key (constant-time); false without a key. */
  public static boolean verifies(String key, String orderId, Notice n) {
    if (key == null || key.isBlank() || n.operatorProof() == null) return false;
    byte[] given;
    try {
      given = Base64.getUrlDecoder().decode(n.operatorProof());
    } catch (IllegalArgumentException notBase64) {
      return false;
    }
    return MessageDigest.isEqual(given, mac(key, claims(orderId, n.notifyId(), n.kind(), n.amount(), n.txn())));
  }

  private static String claims(String orderId, String notifyId, String kind, long amount, String txn) {
    return orderId + "|" + notifyId + "|" + kind + "|" + amount + "|" + (txn == null ? "" : txn);
  }

  private static byte[] mac(String key, String text) {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      return m.doFinal(text.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JRE", e);
    }
  }
}
