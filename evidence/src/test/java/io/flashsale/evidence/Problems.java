package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.problem.Problem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Locale;

/** The error answers of the service's servers on the wire: RFC 9457 problem details. */
final class Problems {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private Problems() {}

  /**
   * Null when the reply is the problem detail of this status and code (application/problem+json;
   * type, title, status, detail, code and its alias error; no message), else what differs.
   */
  static String mismatch(HttpJson.Reply r, int status, String code) {
    String type = r.header("Content-Type");
    JsonNode b = r.body();
    if (r.status() != status) return "status " + r.status() + ", not " + status;
    if (type == null || !type.startsWith(Problem.MEDIA_TYPE)) return "Content-Type " + type;
    if (b == null || !b.isObject()) return "no JSON object";
    if (!code.equals(b.path("code").asText(null))) return "code " + b.path("code");
    if (!code.equals(b.path("error").asText(null))) return "error " + b.path("error") + " is not the code";
    if (!("https://flashsale.dev/problems/" + code.toLowerCase(Locale.ROOT).replace('_', '-')).equals(b.path("type").asText(null))) {
      return "type " + b.path("type");
    }
    if (!Problem.reasonPhrase(status).equals(b.path("title").asText(null))) return "title " + b.path("title");
    if (b.path("status").asInt() != status || !b.path("status").isInt()) return "status member " + b.path("status");
    if (!b.path("detail").isTextual() || b.path("detail").asText().isBlank()) return "detail " + b.path("detail");
    if (b.has("message")) return "a message member besides the detail";
    return null;
  }

  static boolean is(HttpJson.Reply r, int status, String code) {
    return mismatch(r, status, code) == null;
  }

  /** "→ 400 CODE problem+json" or what differs, and the body, for an evidence line. */
  static String shown(HttpJson.Reply r, int status, String code) {
    String m = mismatch(r, status, code);
    return (m == null ? status + " " + code + " as application/problem+json" : m) + " (" + r.raw().trim() + ")";
  }

  /** Any request, as given, to any of the servers: headers name, value, name, value … */
  static HttpJson.Reply send(String url, String method, String body, String... headers) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    for (int i = 0; i + 1 < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
    try {
      HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
      JsonNode parsed;
      try {
        parsed = r.body().isBlank() ? null : HttpJson.JSON.readTree(r.body());
      } catch (IOException notJson) {
        parsed = null;
      }
      return new HttpJson.Reply(r.statusCode(), parsed, r.body(), r.headers());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

}
