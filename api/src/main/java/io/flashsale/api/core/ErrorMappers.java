package io.flashsale.api.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.flashsale.persistence.Database;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Every failure becomes a problem detail with a stable code; internals go to the log only. */
public final class ErrorMappers {
  private static final Logger log = LoggerFactory.getLogger(ErrorMappers.class);

  private ErrorMappers() {}

  public static final class MalformedJson implements ExceptionMapper<JsonProcessingException> {
    @Override
    public Response toResponse(JsonProcessingException e) {
      return ApiError.response(400, "MALFORMED_JSON", detail(e));
    }

    /** What a client can fix, without echoing the parser's text (which may quote the body). */
    static String detail(JsonProcessingException e) {
      String said = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
      java.util.regex.Matcher dup = DUPLICATE.matcher(said);
      if (dup.lookingAt()) return "the request body names the field '" + dup.group(1) + "' more than once";
      if (said.startsWith("Trailing token")) return "the request body holds more than one JSON value";
      return "the request body is not valid JSON";
    }

    private static final java.util.regex.Pattern DUPLICATE = java.util.regex.Pattern.compile("Duplicate field '([a-z_]{1,32})'");
  }

  public static final class WebErrors implements ExceptionMapper<WebApplicationException> {
    @Override
    public Response toResponse(WebApplicationException e) {
      Response r = e.getResponse();
      if (r.hasEntity()) return r;
      int status = r.getStatus();
      String code = codeFor(status);
      Response.ResponseBuilder out = Response.fromResponse(ApiError.response(status, code, r.getStatusInfo().getReasonPhrase()));
      // keep what the framework said besides the body, e.g. the Allow header a 405 must carry
      r.getHeaders().forEach((name, values) -> {
        if (!name.equalsIgnoreCase("Content-Type") && !name.equalsIgnoreCase("Content-Length")) {
          values.forEach(v -> out.header(name, v));
        }
      });
      // every 401 says how to authenticate
      if (status == 401 && !r.getHeaders().containsKey("WWW-Authenticate")) out.header("WWW-Authenticate", ApiError.BUYER_CHALLENGE);
      return out.build();
    }

    /** The stable code of an error that carries nothing but its status (also Jetty's own errors). */
    public static String codeFor(int status) {
      return switch (status) {
        case 404 -> "NOT_FOUND";
        case 405 -> "METHOD_NOT_ALLOWED";
        case 406 -> "NOT_ACCEPTABLE";
        case 415 -> "UNSUPPORTED_MEDIA_TYPE";
        case 401 -> "UNAUTHENTICATED";
        case 403 -> "FORBIDDEN";
        default -> status >= 500 ? "INTERNAL" : "BAD_REQUEST";
      };
    }
  }

  /**
   * PostgreSQL did not answer (connection refused or lost, pool timeout, server shutting down or
   * out of resources, a serialization or deadlock abort): 503 with Retry-After, the same request
   * may be sent again (with the same key). Anything else from the database (a data error, a
   * missing table after a bad migration, an internal error) is no outage: a retry cannot help, so
   * it stays a 500 with an error id and the stack trace in the log.
   */
  public static final class DatabaseUnavailable implements ExceptionMapper<Database.DatabaseException> {
    @Override
    public Response toResponse(Database.DatabaseException e) {
      if (e instanceof Database.DataError || !isOutage(e)) return new Unexpected().toResponse(e);
      log.warn("database unavailable (SQLState {}): {}", e.sqlState(), e.getMessage());
      return ApiError.unavailable(1, "DATABASE_UNAVAILABLE",
          "the database did not answer; retry (with the same request_key or Idempotency-Key)");
    }
  }

  /** SQLState classes 08 (connection), 53 (resources), 57P0x (shutdown), 40001/40P01, or a transient cause without one. */
  static boolean isOutage(Database.DatabaseException e) {
    String state = e.sqlState();
    if (state == null) {
      return e.getCause() instanceof java.sql.SQLTransientException || e.getCause() instanceof java.sql.SQLRecoverableException;
    }
    return state.startsWith("08") || state.startsWith("53") || state.startsWith("57P0") || state.equals("40001")
        || state.equals("40P01");
  }

  public static final class Unexpected implements ExceptionMapper<Throwable> {
    @Override
    public Response toResponse(Throwable e) {
      if (e instanceof WebApplicationException w) return new WebErrors().toResponse(w);
      String id = UUID.randomUUID().toString().substring(0, 8);
      log.error("request failed (error id {})", id, e);
      return ApiError.response(500, "INTERNAL", "internal error, id " + id);
    }
  }
}
