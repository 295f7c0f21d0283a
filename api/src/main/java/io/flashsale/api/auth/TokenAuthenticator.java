package io.flashsale.api.auth;

import io.dropwizard.auth.Authenticator;
import io.flashsale.persistence.Principals;
import io.flashsale.api.core.ApiError;
import java.util.Optional;

/** Bearer token → caller; a revoked principal is refused with 403 whatever its token says. */
public final class TokenAuthenticator implements Authenticator<String, Caller> {
  private final TokenService tokens;
  private final Principals principals;

  public TokenAuthenticator(TokenService tokens, Principals principals) {
    this.tokens = tokens;
    this.principals = principals;
  }

  @Override
  public Optional<Caller> authenticate(String token) {
    Optional<Caller> caller = tokens.verify(token);
    if (caller.isPresent() && principals.isRevoked(caller.get().tenant(), caller.get().subject())) {
      throw ApiError.exception(403, "REVOKED", "this principal has been revoked");
    }
    return caller;
  }
}
