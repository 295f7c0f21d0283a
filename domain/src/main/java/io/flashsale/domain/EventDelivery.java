package io.flashsale.domain;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * How the outbox relay proves a delivery to the fulfillment consumer (docs/DESIGN.md §Outbox,
 * relay and consumer): {@value #HEADER}: {@code v1=} base64url(HMAC-SHA256 of the raw body) under
 * the secret the two share. The body carries the event id, so a captured delivery sent again is
 * only a duplicate; anything not signed with the secret is refused before it is read as an event.
 */
public final class EventDelivery {
  public static final String HEADER = "X-Delivery-Signature";
  private static final String VERSION = "v1=";

  private final byte[] secret;

  public EventDelivery(String secret) {
    if (secret == null || secret.isBlank()) throw new IllegalArgumentException("the delivery secret is missing");
    this.secret = secret.getBytes(StandardCharsets.UTF_8);
  }

  /** The header value for a body. */
  public String sign(byte[] body) {
    return VERSION + Base64.getUrlEncoder().withoutPadding().encodeToString(mac(body));
  }

  /** Whether the header value is this secret's signature of the body (constant-time). */
  public boolean verifies(String header, byte[] body) {
    if (header == null || !header.startsWith(VERSION)) return false;
    byte[] given;
    try {
      given = Base64.getUrlDecoder().decode(header.substring(VERSION.length()));
    } catch (IllegalArgumentException notBase64) {
      return false;
    }
    return MessageDigest.isEqual(given, mac(body));
  }

  private byte[] mac(byte[] body) {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(new SecretKeySpec(secret, "HmacSHA256"));
      return m.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every JRE", e);
    }
  }
}
