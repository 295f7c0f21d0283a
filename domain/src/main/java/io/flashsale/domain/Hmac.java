package io.flashsale.domain;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** HMAC-SHA256 as the service's own proofs use it ({@link EventDelivery}, {@link OperatorProof}): base64url, compared in constant time. */
final class Hmac {
  private Hmac() {}

  static String sign(byte[] key, byte[] data) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(mac(key, data));
  }

  /** Whether {@code given} (base64url) is the MAC of data under key; false for anything not base64url. */
  static boolean verifies(byte[] key, byte[] data, String given) {
    if (given == null) return false;
    byte[] decoded;
    try {
      decoded = Base64.getUrlDecoder().decode(given);
    } catch (IllegalArgumentException notBase64) {
      return false;
    }
    return MessageDigest.isEqual(decoded, mac(key, data));
  }

  static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] mac(byte[] key, byte[] data) {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(new SecretKeySpec(key, "HmacSHA256"));
      return m.doFinal(data);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JRE", e);
    }
  }
}
