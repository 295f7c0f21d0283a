package io.flashsale.paymentchannel;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The channel's callback signature, {@code X-Channel-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<body>">} (docs/DESIGN.md §Contracts): signing for whoever sends callbacks,
 * checking for the service that receives them. Product code; a channel stub may use it.
 */
public final class CallbackSignatures {
  public static final String HEADER = "X-Channel-Signature";
  /** How far a signature's time may be from ours: replays of old callbacks are refused. */
  public static final long TOLERANCE_SECONDS = 300;
  // 12 digits: any Unix time in seconds, and never an overflow when parsed
  private static final Pattern FORMAT = Pattern.compile("t=(\\d{1,12}),v1=([0-9a-f]{64})");

  private CallbackSignatures() {}

  public static String header(String secret, long unixSeconds, byte[] body) {
    return "t=" + unixSeconds + ",v1=" + hmacHex(secret, unixSeconds + "." + new String(body, StandardCharsets.UTF_8));
  }

  /** True when the header is well formed, within the tolerance of nowSeconds and signs this body. */
  public static boolean valid(String secret, String header, byte[] body, long nowSeconds) {
    if (header == null) return false;
    Matcher m = FORMAT.matcher(header);
    if (!m.matches()) return false;
    long t = Long.parseLong(m.group(1));
    if (Math.abs(nowSeconds - t) > TOLERANCE_SECONDS) return false;
    String expected = hmacHex(secret, t + "." + new String(body, StandardCharsets.UTF_8));
    // constant time: the comparison must not tell an attacker how many characters were right
    return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), m.group(2).getBytes(StandardCharsets.UTF_8));
  }

  static String hmacHex(String secret, String payload) {
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
