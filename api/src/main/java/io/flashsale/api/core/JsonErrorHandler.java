package io.flashsale.api.core;

import io.dropwizard.core.setup.Environment;
import io.flashsale.problem.Problem;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Errors Jetty answers before a request reaches Jersey (a control character in the path, an
 * ambiguous or broken percent-encoding such as {@code %25} or {@code %zz}, a malformed request
 * line, a filter's sendError) as the same problem detail as every other error, instead of
 * Jetty's HTML page or an empty body.
 */
public final class JsonErrorHandler extends ErrorHandler {
  @Override
  protected void generateResponse(Request request, Response response, int code, String message, Throwable cause,
      Callback callback) {
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, Problem.MEDIA_TYPE);
    if (code == 401 && !response.getHeaders().contains(HttpHeader.WWW_AUTHENTICATE)) {
      response.getHeaders().put(HttpHeader.WWW_AUTHENTICATE, ApiError.BUYER_CHALLENGE);
    }
    response.write(true, ByteBuffer.wrap(body(code)), callback);
  }

  @Override
  public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
    fields.put(HttpHeader.CONTENT_TYPE, Problem.MEDIA_TYPE);
    return ByteBuffer.wrap(body(status));
  }

  /** On the application's context and on the server (errors raised before any context is chosen). */
  public static void install(Environment env) {
    env.getApplicationContext().setErrorHandler(new JsonErrorHandler());
    env.lifecycle().addServerLifecycleListener(server -> server.setErrorHandler(new JsonErrorHandler()));
  }

  /** The reason phrase as the detail: Jetty's own message may quote the request back. */
  static byte[] body(int status) {
    int s = status >= 400 && status <= 599 ? status : 500;
    // the same code a bodiless error of this status gets from the mappers
    return Problem.of(s, ErrorMappers.WebErrors.codeFor(s), Problem.reasonPhrase(s)).toJson();
  }
}
