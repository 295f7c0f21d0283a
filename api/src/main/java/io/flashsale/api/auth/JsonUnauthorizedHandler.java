package io.flashsale.api.auth;

import io.dropwizard.auth.UnauthorizedHandler;
import io.flashsale.api.core.ApiError;
import jakarta.ws.rs.core.Response;

/** 401 as JSON with a stable code, like every other error. */
public final class JsonUnauthorizedHandler implements UnauthorizedHandler {
  @Override
  public Response buildResponse(String prefix, String realm) {
    return ApiError.response(401, "UNAUTHENTICATED", "a valid bearer token is required");
  }
}
