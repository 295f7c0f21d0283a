package io.flashsale.api.core;

import io.dropwizard.core.setup.Environment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors Jetty answers before a request reaches Jersey (a control character in the path, an
 * ambiguous or broken percent-encoding such as {@code %25} or {@code %zz}, a malformed request
 * line, a filter's sendError) as the same JSON {error, message} as every other error, instead of
 * Jetty's HTML page or an empty body.
 */
public final class JsonErrorHandler extends ErrorHandler {
  @Override
  protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
      Callback callback) {
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    response.write(true, ByteBuffer.wrap(body(code)), callback);
  }

  @Override
  public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
    fields.put(HttpHeader.CONTENT_TYPE, "application/json");
    return ByteBuffer.wrap(body(status));
  }

  /** On the application's context and on the server (errors raised before any context is chosen). */
  public static void install(Environment env) {
    env.getApplicationContext().setErrorHandler(new JsonErrorHandler());
    env.lifecycle().addServerLifecycleListener(server -> server.setErrorHandler(new JsonErrorHandler()));
  }

  /** The reason phrase only: Jetty's own message may quote the request back. */
  static byte[] body(int status) {
    // the same code a bodiless error of this status gets from the mappers
    String code = ErrorMappers.WebErrors.codeFor(status);
    String reason = HttpStatus.getMessage(status).replace("\"", "'");
    return ("{\"error\":\"" + code + "\",\"message\":\"" + reason + "\"}").getBytes(StandardCharsets.UTF_8);
  }
}
