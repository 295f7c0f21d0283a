package io.flashsale.api.resources;

import io.flashsale.api.auth.Caller;
import io.flashsale.api.core.ApiError;
import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;

/**
 * Per-principal request rates on every authenticated request (docs/DESIGN.md §Overload): after
 * authentication, before the resource runs, a token of the caller's bucket (reads for GET and
 * HEAD, writes otherwise); none left: 429 RATE_LIMITED with Retry-After, nothing done. Requests
 * without a caller (login, callbacks, the contract) are not counted here.
 */
@Priority(Priorities.AUTHORIZATION)
public final class RateLimits implements ContainerRequestFilter {
  public static final String CODE = "RATE_LIMITED";

  private final PrincipalRates rates;

  /** Writes and reads per second each, with the burst a quiet principal may spend at once. */
  public RateLimits(double writesPerSecond, int writeBurst, double readsPerSecond, int readBurst) {
    this.rates = new PrincipalRates(new PrincipalRates.Limit(writesPerSecond, writeBurst),
        new PrincipalRates.Limit(readsPerSecond, readBurst), System::nanoTime);
  }

  @Override
  public void filter(ContainerRequestContext request) {
    if (!(request.getSecurityContext().getUserPrincipal() instanceof Caller caller)) return;
    String method = request.getMethod();
    PrincipalRates.Kind kind = "GET".equals(method) || "HEAD".equals(method)
        ? PrincipalRates.Kind.READ : PrincipalRates.Kind.WRITE;
    long waitSeconds = rates.admit(caller.getName(), kind);
    if (waitSeconds > 0) {
      throw new WebApplicationException(ApiError.tooMany((int) Math.min(Integer.MAX_VALUE, waitSeconds), CODE,
          "this principal sends " + (kind == PrincipalRates.Kind.READ ? "reads" : "writes")
              + " faster than its rate; retry after Retry-After seconds"));
    }
  }
}
