package io.flashsale.api.auth;

import java.security.Principal;

/**
 * The identity a verified token carries, when that token expires (epoch seconds; a long-lived
 * response such as an event stream ends then), when it was issued (epoch milliseconds; a
 * revocation or logout refuses every token issued until then), its id, and the id of the key that
 * signed it. Never read from a body or a plain header.
 */
public record Caller(String tenant, String subject, long expiresAtEpochSecond, long issuedAtMillis, String tokenId,
    String keyId) implements Principal {
  /** A token of the format before issued-at times: issued at 0, so any revocation or logout refuses it. */
  public Caller(String tenant, String subject, long expiresAtEpochSecond) {
    this(tenant, subject, expiresAtEpochSecond, 0, null, null);
  }

  /** An identity without an expiry. */
  public Caller(String tenant, String subject) {
    this(tenant, subject, Long.MAX_VALUE);
  }

  @Override
  public String getName() {
    return tenant + "/" + subject;
  }
}
