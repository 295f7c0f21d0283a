package io.flashsale.api.auth;

import java.security.Principal;

/** The identity a verified token carries. Never read from a body or a plain header. */
public record Caller(String tenant, String subject) implements Principal {
  @Override
  public String getName() {
    return tenant + "/" + subject;
  }
}
