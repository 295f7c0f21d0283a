package io.flashsale.api.core;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import io.flashsale.api.representations.ErrorBody;

/** Errors on the wire: {"error": STABLE_CODE, "message": ...}; never a stack trace. */
public final class ApiError {
  private ApiError() {}

  public static Response response(int status, String code, String message) {
    return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(new ErrorBody(code, message)).build();
  }

  public static WebApplicationException exception(int status, String code, String message) {
    return new WebApplicationException(message, response(status, code, message));
  }

  /**
   * 503 with Retry-After: the service is busy or the engine away, and the same request may be sent
   * again after that many seconds. The body is an {@link ErrorBody} or, for a create, its outcome.
   */
  public static Response unavailable(int retryAfterSeconds, Object body) {
    return Response.status(503).header("Retry-After", String.valueOf(retryAfterSeconds))
        .type(MediaType.APPLICATION_JSON_TYPE).entity(body).build();
  }

  /** 429 with Retry-After: this principal has used its share; others are still served. */
  public static Response tooMany(int retryAfterSeconds, Object body) {
    return Response.status(429).header("Retry-After", String.valueOf(retryAfterSeconds))
        .type(MediaType.APPLICATION_JSON_TYPE).entity(body).build();
  }

  public static WebApplicationException badRequest(String code, String message) {
    return exception(400, code, message);
  }
}
