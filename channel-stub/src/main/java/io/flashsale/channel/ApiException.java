package io.flashsale.channel;

import java.util.Map;

/** An error answer with a JSON body; thrown by endpoint code, turned into a reply by {@link ChannelHandler}. */
final class ApiException extends RuntimeException {
  final int status;
  final Map<String, Object> body;

  ApiException(int status, Map<String, Object> body) {
    super(String.valueOf(body), null, false, false);
    this.status = status;
    this.body = body;
  }

  static ApiException badRequest(String message) {
    return new ApiException(400, Json.obj("error", "BAD_REQUEST", "message", message));
  }
}
