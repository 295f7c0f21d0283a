package io.flashsale.api.auth;

import io.dropwizard.auth.Authenticator;
import io.flashsale.api.core.ApiError;
import io.flashsale.persistence.Principals;
import jakarta.ws.rs.core.Response;
import java.util.Optional;

/**
 * Bearer token → caller. A revoked principal is refused with 403 whatever its token says; a token
 * issued before the principal's last revocation or logout is refused with 401 (log in again), so
 * an unrevoke revives none of them; a token whose key was retired no longer verifies at all.
 */
public final class TokenAuthenticator implements Authenticator<String, Caller> {
  /** Why a verified token no longer speaks for its caller. */
  public enum Refusal {
    /** The principal is revoked (403). */
    REVOKED,
    /** The token was issued before the principal's last logout or revocation (401). */
    SESSION_ENDED,
    /** The key that signed the token was retired (401). */
    KEY_RETIRED
  }

  private final TokenService tokens;
  private final Principals principals;

  public TokenAuthenticator(TokenService tokens, Principals principals) {
    this.tokens = tokens;
    this.principals = principals;
  }

  @Override
  public Optional<Caller> authenticate(String token) {
    Optional<Caller> caller = tokens.verify(token);
    if (caller.isEmpty()) return caller;
    Optional<Refusal> refusal = refusal(caller.get());
    if (refusal.isEmpty()) return caller;
    throw switch (refusal.get()) {
      case REVOKED -> ApiError.exception(403, "REVOKED", "this principal has been revoked");
      case SESSION_ENDED -> sessionEnded();
      case KEY_RETIRED -> ApiError.exception(401, "UNAUTHENTICATED", "a valid bearer token is required");
    };
  }

  /** Empty while the caller's token still speaks for it (an open event stream asks again and again). */
  public Optional<Refusal> refusal(Caller caller) {
    if (!tokens.keyStillValid(caller)) return Optional.of(Refusal.KEY_RETIRED);
    Principals.Standing standing = principals.standing(caller.tenant(), caller.subject());
    if (standing.revoked()) return Optional.of(Refusal.REVOKED);
    if (standing.refusesTokenIssuedAt(caller.issuedAtMillis())) return Optional.of(Refusal.SESSION_ENDED);
    return Optional.empty();
  }

  private static jakarta.ws.rs.WebApplicationException sessionEnded() {
    Response r = Response.fromResponse(ApiError.response(401, "SESSION_ENDED",
            "this token was issued before its principal logged out or was revoked; log in again"))
        .header("WWW-Authenticate", "Bearer realm=\"flashsale\", error=\"invalid_token\"").build();
    return new jakarta.ws.rs.WebApplicationException("session ended", r);
  }
}
