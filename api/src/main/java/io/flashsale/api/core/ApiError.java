package io.flashsale.api.core;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.LinkedHashMap;
import java.util.Map;

/** Errors on the wire: {"error": STABLE_CODE, "message": ...}; never a stack trace. */
public final class ApiError {
  private ApiError() {}

  public static Response response(int status, String code, String message) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("error", code);
    body.put("message", message);
    return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE).entity(body).build();
  }

  public static WebApplicationException exception(int status, String code, String message) {
    return new WebApplicationException(message, response(status, code, message));
  }

  public static WebApplicationException badRequest(String code, String message) {
    return exception(400, code, message);
  }
}
