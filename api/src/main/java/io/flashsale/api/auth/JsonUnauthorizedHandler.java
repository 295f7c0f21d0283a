package io.flashsale.api.auth;

import io.dropwizard.auth.UnauthorizedHandler;
import io.flashsale.api.core.ApiError;
import jakarta.ws.rs.core.Response;

/** 401 as a problem detail with a stable code, and the buyer API's challenge (realm "flashsale"). */
public final class JsonUnauthorizedHandler implements UnauthorizedHandler {
  @Override
  public Response buildResponse(String prefix, String realm) {
    return ApiError.unauthorized(ApiError.BUYER_CHALLENGE, "UNAUTHENTICATED", "a valid bearer token is required");
  }

  /** A token (header or cookie) was presented and refused: the challenge says invalid_token (RFC 6750 §3.1). */
  public Response invalidToken() {
    return ApiError.unauthorized(ApiError.BUYER_INVALID_TOKEN, "UNAUTHENTICATED",
        "the token is not valid (forged, expired or from another key); log in again");
  }
}
