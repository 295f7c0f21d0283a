package io.flashsale.domain;

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
    this.secret = Hmac.utf8(secret);
  }

  /** The header value for a body. */
  public String sign(byte[] body) {
    return VERSION + Hmac.sign(secret, body);
  }

  /** Whether the header value is this secret's signature of the body (constant-time). */
  public boolean verifies(String header, byte[] body) {
    return header != null && header.startsWith(VERSION) && Hmac.verifies(secret, body, header.substring(VERSION.length()));
  }
}
