package io.flashsale.problem;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Locale;
import java.util.Objects;

/**
 * Every error answer of the service's HTTP servers (the REST API, the admin port, the fulfillment
 * consumer): an RFC 9457 problem detail, sent as {@value #MEDIA_TYPE}.
 *
 * <pre>{"type": "https://flashsale.dev/problems/order-not-found", "title": "Not Found", "status": 404,
 *  "detail": "no such order", "code": "ORDER_NOT_FOUND", "error": "ORDER_NOT_FOUND"}</pre>
 *
 * {@code code} is the stable code clients branch on; {@code error} carries the same value for
 * clients of the earlier {@code {error, message}} bodies; {@code detail} is for people and may
 * change. {@code parameter} names the request parameter at fault, where one is known (admin tasks).
 * Never a stack trace.
 */
@JsonPropertyOrder({"type", "title", "status", "detail", "code", "error", "parameter"})
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Problem(String type, String title, int status, String detail, String code, String error, String parameter) {
  public static final String MEDIA_TYPE = "application/problem+json";
  public static final String TYPE_BASE = "https://flashsale.dev/problems/";
  private static final ObjectMapper JSON = new ObjectMapper();

  public Problem {
    Objects.requireNonNull(code, "code");
    if (status < 400 || status > 599) throw new IllegalArgumentException("not an error status: " + status);
    if (error != null && !error.equals(code)) throw new IllegalArgumentException("error is an alias of code");
    error = code;
    if (type == null) type = typeOf(code);
    if (title == null) title = reasonPhrase(status);
  }

  /** A problem of this status and stable code, with a message for people. */
  public static Problem of(int status, String code, String detail) {
    return new Problem(null, null, status, detail, code, code, null);
  }

  /** A refused parameter: the same problem naming the parameter at fault. */
  public static Problem ofParameter(int status, String code, String detail, String parameter) {
    return new Problem(null, null, status, detail, code, code, parameter);
  }

  /** This problem naming the parameter at fault (null: none). */
  public Problem withParameter(String name) {
    return new Problem(type, title, status, detail, code, error, name);
  }

  /** https://flashsale.dev/problems/ plus the code in kebab case: ORDER_NOT_FOUND → order-not-found. */
  public static String typeOf(String code) {
    return TYPE_BASE + code.toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The body's bytes, for servers that write without a JSON provider (servlet filters, the consumer). */
  public byte[] toJson() {
    try {
      return JSON.writeValueAsBytes(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a problem detail is always serialisable", e);
    }
  }

  /** The HTTP reason phrase of an error status (RFC 9110), the problem's title. */
  public static String reasonPhrase(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 402 -> "Payment Required";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 406 -> "Not Acceptable";
      case 407 -> "Proxy Authentication Required";
      case 408 -> "Request Timeout";
      case 409 -> "Conflict";
      case 410 -> "Gone";
      case 411 -> "Length Required";
      case 412 -> "Precondition Failed";
      case 413 -> "Content Too Large";
      case 414 -> "URI Too Long";
      case 415 -> "Unsupported Media Type";
      case 416 -> "Range Not Satisfiable";
      case 417 -> "Expectation Failed";
      case 421 -> "Misdirected Request";
      case 422 -> "Unprocessable Content";
      case 426 -> "Upgrade Required";
      case 428 -> "Precondition Required";
      case 429 -> "Too Many Requests";
      case 431 -> "Request Header Fields Too Large";
      case 500 -> "Internal Server Error";
      case 501 -> "Not Implemented";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      case 504 -> "Gateway Timeout";
      case 505 -> "HTTP Version Not Supported";
      default -> status < 500 ? "Bad Request" : "Internal Server Error";
    };
  }
}
