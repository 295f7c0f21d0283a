package io.flashsale.api.resources;

import io.dropwizard.auth.Auth;
import io.flashsale.api.auth.Caller;
import io.flashsale.persistence.Principals;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * POST /session/logout: every token of the caller issued until now is refused from now on (a
 * token names no device, so all its sessions end), its open event streams end, and the session
 * cookie is cleared. Registered whether or not dev login is on: whoever issues the tokens, the
 * service is where they stop working.
 */
@Path("/session/logout")
public class LogoutResource {
  private static final Logger log = LoggerFactory.getLogger(LogoutResource.class);
  private final Principals principals;
  /** auth.secureCookie: null = Secure exactly when the request came over TLS. */
  private final Boolean secureCookie;

  public LogoutResource(Principals principals, Boolean secureCookie) {
    this.principals = principals;
    this.secureCookie = secureCookie;
  }

  @POST
  public Response logout(@Auth Caller caller, @Context SecurityContext security) {
    principals.endSessions(caller.tenant(), caller.subject(), caller.issuedAtMillis());
    log.info("{}/{} logged out: its tokens issued until now are refused", caller.tenant(), caller.subject());
    boolean secure = secureCookie != null ? secureCookie : security != null && security.isSecure();
    return Response.noContent().cookie(SessionResource.cookie("", 0, secure)).build();
  }
}
