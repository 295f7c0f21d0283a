package io.flashsale.api.resources;

import io.flashsale.api.representations.SessionBody;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.api.auth.TokenService;
import io.flashsale.api.core.ApiError;
import io.flashsale.persistence.Principals;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.SecurityContext;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** Dev login: a signed token for any tenant/subject. Only registered when auth.devLogin is on. */
@Path("/session")
@Consumes(MediaType.APPLICATION_JSON)
@Produces(MediaType.APPLICATION_JSON)
public class SessionResource {
  private final TokenService tokens;
  private final Principals principals;
  /** auth.secureCookie: null = Secure exactly when the request came over TLS. */
  private final Boolean secureCookie;

  public SessionResource(TokenService tokens, Principals principals) {
    this(tokens, principals, null);
  }

  public SessionResource(TokenService tokens, Principals principals, Boolean secureCookie) {
    this.tokens = tokens;
    this.principals = principals;
    this.secureCookie = secureCookie;
  }

  @POST
  public jakarta.ws.rs.core.Response login(JsonNode body, @Context SecurityContext security) {
    if (body == null || !body.isObject()) throw ApiError.badRequest("BODY_REQUIRED", "{tenant, subject} required");
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!Set.of("tenant", "subject").contains(f)) throw ApiError.badRequest("UNKNOWN_FIELD", "unknown field " + f);
    }
    String tenant = name(body, "tenant");
    String subject = name(body, "subject");
    principals.register(tenant, subject);
    String token = tokens.issue(tenant, subject);
    SessionBody out = new SessionBody(token, "Bearer", tokens.ttlSeconds(), tokens.csrfFor(token), true);
    boolean secure = secureCookie != null ? secureCookie : security != null && security.isSecure();
    return jakarta.ws.rs.core.Response.ok(out).cookie(cookie(token, tokens.ttlSeconds(), secure)).build();
  }

  /** HttpOnly, SameSite=Strict; Secure over TLS, so a browser never sends it over plain HTTP. */
  static NewCookie cookie(String token, long ttlSeconds, boolean secure) {
    return new NewCookie.Builder(io.flashsale.api.auth.SessionAuthFilter.COOKIE)
        .value(token).path("/").httpOnly(true).secure(secure).maxAge((int) ttlSeconds)
        .sameSite(NewCookie.SameSite.STRICT).build();
  }

  private static String name(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || !v.isTextual() || !TokenService.NAME.matcher(v.asText()).matches()) {
      throw ApiError.badRequest("INVALID_FIELD", field + " must match " + TokenService.NAME.pattern());
    }
    return v.asText();
  }
}
