package io.flashsale.api.auth;

import io.dropwizard.auth.AuthFilter;
import io.flashsale.api.core.ApiError;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.Cookie;
import jakarta.ws.rs.core.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Set;

/**
 * Identity from a signed token, carried either as {@code Authorization: Bearer …} or as the
 * session cookie. A cookie is sent by the browser on its own, so an unsafe request authenticated
 * by the cookie must also carry the CSRF token the session handed out (header X-CSRF-Token); the
 * cookie itself is checked first, so a forged or expired one is 401.
 */
@Priority(Priorities.AUTHENTICATION)
public final class SessionAuthFilter extends AuthFilter<String, Caller> {
  public static final String COOKIE = "flashsale_session";
  public static final String CSRF_HEADER = "X-CSRF-Token";
  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");

  private TokenService tokens;

  @Override
  public void filter(ContainerRequestContext request) {
    String header = request.getHeaderString(HttpHeaders.AUTHORIZATION);
    if (header != null) {
      String token = header.regionMatches(true, 0, "Bearer ", 0, 7) ? header.substring(7).trim() : null;
      if (token == null || token.isEmpty()) throw unauthorized();
      if (!authenticate(request, token, "Bearer")) throw invalidToken();
      return;
    }
    Cookie cookie = request.getCookies().get(COOKIE);
    if (cookie == null) throw unauthorized();
    // authentication first: a forged or expired cookie is 401 (log in again), not a CSRF refusal
    if (!authenticate(request, cookie.getValue(), "Cookie")) throw invalidToken();
    if (!SAFE.contains(request.getMethod())) {
      String given = request.getHeaderString(CSRF_HEADER);
      String expected = tokens.csrfFor(cookie.getValue());
      if (given == null || expected == null || !MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8),
          expected.getBytes(StandardCharsets.UTF_8))) {
        throw ApiError.exception(403, "CSRF", "a cookie-authenticated " + request.getMethod()
            + " needs the session's " + CSRF_HEADER + " header");
      }
    }
  }

  /** No token presented (or not as a bearer token). */
  private RuntimeException unauthorized() {
    return unauthorizedHandler.buildException(prefix, realm);
  }

  /** A token presented and refused: the challenge adds error="invalid_token". */
  private RuntimeException invalidToken() {
    if (unauthorizedHandler instanceof JsonUnauthorizedHandler json) {
      return new WebApplicationException(json.invalidToken());
    }
    return unauthorized();
  }

  public static final class Builder extends AuthFilterBuilder<String, Caller, SessionAuthFilter> {
    private final TokenService tokens;

    public Builder(TokenService tokens) {
      this.tokens = tokens;
    }

    @Override
    protected SessionAuthFilter newInstance() {
      SessionAuthFilter f = new SessionAuthFilter();
      f.tokens = tokens;
      return f;
    }
  }
}
