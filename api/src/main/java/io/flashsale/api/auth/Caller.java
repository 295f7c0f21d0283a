package io.flashsale.api.auth;

import java.security.Principal;

/**
 * The identity a verified token carries, and when that token expires (epoch seconds): a long-lived
 * response such as an event stream ends then. Never read from a body or a plain header.
 */
public record Caller(String tenant, String subject, long expiresAtEpochSecond) implements Principal {
  /** An identity without an expiry. */
  public Caller(String tenant, String subject) {
    this(tenant, subject, Long.MAX_VALUE);
  }

  @Override
  public String getName() {
    return tenant + "/" + subject;
  }
}
