package io.flashsale.channel;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/** The X-Channel-Signature header: {@code t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">}. */
public final class Signatures {
  public static final String HEADER = "X-Channel-Signature";

  private Signatures() {}

  public static String header(String secret, long unixSeconds, byte[] body) {
    return "t=" + unixSeconds + ",v1=" + hmacHex(secret, unixSeconds + "." + new String(body, StandardCharsets.UTF_8));
  }

  public static String hmacHex(String secret, String payload) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      byte[] digest = mac.doFinal(payload.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder(digest.length * 2);
      for (byte b : digest) {
        hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
      }
      return hex.toString();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }
}
