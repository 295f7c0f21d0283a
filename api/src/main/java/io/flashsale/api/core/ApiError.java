package io.flashsale.api.core;

import io.flashsale.problem.Problem;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

/**
 * Every error answer of the API and the admin port: an RFC 9457 problem detail
 * ({@link Problem}, {@code application/problem+json}) with a stable code; never a stack trace.
 * Order outcomes (create, pay, cancel) are no errors: they keep their {@code application/json} bodies.
 */
public final class ApiError {
  public static final MediaType PROBLEM = MediaType.valueOf(Problem.MEDIA_TYPE);
  /** The buyer API's challenge (RFC 6750). */
  public static final String BUYER_CHALLENGE = "Bearer realm=\"flashsale\"";
  /** The buyer API's challenge when a token was presented and refused. */
  public static final String BUYER_INVALID_TOKEN = BUYER_CHALLENGE + ", error=\"invalid_token\"";
  /** The admin port's challenge. */
  public static final String ADMIN_CHALLENGE = "Bearer realm=\"flashsale-admin\"";
  /** The payment callback's challenge: a signed request, not a token. */
  public static final String CALLBACK_CHALLENGE = "Signature realm=\"flashsale-callbacks\", header=\"X-Channel-Signature\"";

  private ApiError() {}

  public static Response response(Problem problem) {
    return Response.status(problem.status()).type(PROBLEM).entity(problem).build();
  }

  public static Response response(int status, String code, String message) {
    return response(Problem.of(status, code, message));
  }

  public static WebApplicationException exception(int status, String code, String message) {
    return new WebApplicationException(message, response(status, code, message));
  }

  public static WebApplicationException exception(Response response) {
    return new WebApplicationException(((Problem) response.getEntity()).detail(), response);
  }

  public static WebApplicationException badRequest(String code, String message) {
    return exception(400, code, message);
  }

  /** 401 with the challenge (WWW-Authenticate) that says how to authenticate here. */
  public static Response unauthorized(String challenge, String code, String message) {
    return Response.fromResponse(response(401, code, message)).header("WWW-Authenticate", challenge).build();
  }

  /**
   * 503 with Retry-After: the service is busy or a dependency away, and the same request may be
   * sent again after that many seconds.
   */
  public static Response unavailable(int retryAfterSeconds, String code, String message) {
    return Response.fromResponse(response(503, code, message)).header("Retry-After", String.valueOf(retryAfterSeconds))
        .build();
  }

  /** 429 with Retry-After: this principal has used its share; others are still served. */
  public static Response tooMany(int retryAfterSeconds, String code, String message) {
    return Response.fromResponse(response(429, code, message)).header("Retry-After", String.valueOf(retryAfterSeconds))
        .build();
  }
}
