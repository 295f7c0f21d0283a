package io.flashsale.launcher.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A small JSON-over-HTTP client for the demo, the CLI and the experiments. */
public final class HttpJson {
  public static final ObjectMapper JSON = new ObjectMapper();

  public record Reply(int status, JsonNode body, String raw, java.net.http.HttpHeaders headers) {
    public Reply(int status, JsonNode body, String raw) {
      this(status, body, raw, java.net.http.HttpHeaders.of(java.util.Map.of(), (name, value) -> true));
    }

    public String text(String field) {
      return body == null ? null : body.path(field).asText(null);
    }

    /** The first value of a response header, or null. */
    public String header(String name) {
      return headers.firstValue(name).orElse(null);
    }
  }

  /** How long one request may take, from sending to the whole answer, unless a client says otherwise. */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private final HttpClient http;
  private final String base;
  private final String token;
  private final Duration requestTimeout;

  public HttpJson(String base, String token) {
    this(base, token, DEFAULT_REQUEST_TIMEOUT);
  }

  /**
   * A client whose requests fail after {@code requestTimeout} with an {@link UncheckedIOException}
   * caused by {@link java.net.http.HttpTimeoutException}.
   */
  public HttpJson(String base, String token, Duration requestTimeout) {
    this(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build(), base, token, requestTimeout);
  }

  private HttpJson(HttpClient http, String base, String token, Duration requestTimeout) {
    this.http = http;
    this.base = base;
    this.token = token;
    this.requestTimeout = requestTimeout;
  }

  public String token() {
    return token;
  }

  /** The same client (one connection pool) acting with another token. */
  public HttpJson as(String token) {
    return new HttpJson(http, base, token, requestTimeout);
  }

  public Reply get(String path) {
    return send(builder(path).GET());
  }

  public Reply post(String path, Object body) {
    return post(path, body, null);
  }

  /** A POST with an Idempotency-Key (null: none): sent again with the same key, it gets the first answer. */
  public Reply post(String path, Object body, String idempotencyKey) {
    try {
      String json = body == null ? "" : body instanceof String s ? s : JSON.writeValueAsString(body);
      HttpRequest.Builder b = builder(path).header("Content-Type", "application/json");
      if (idempotencyKey != null) b.header("Idempotency-Key", idempotencyKey);
      return send(b.POST(HttpRequest.BodyPublishers.ofString(json)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The same POST sent again while it answers 503 (after its Retry-After, for at most
   * {@code within}), as a client does: a create or a keyed command carries its own key, so the
   * retry gets the first attempt's order or answer (docs/DESIGN.md §Overload).
   */
  public Reply postUntilAnswered(String path, Object body, java.time.Duration within) {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      Reply r = post(path, body);
      if (r.status() != 503 || System.nanoTime() > deadline) return r;
      try {
        Thread.sleep(Math.max(100, retryAfterMillis(r.header("Retry-After"), 1_000, 5_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return r;
      }
    }
  }

  /**
   * A Retry-After header's delay-seconds in ms, at most {@code maxMs}; absent, an HTTP date or
   * nonsense: {@code fallbackMs}.
   */
  public static long retryAfterMillis(String header, long fallbackMs, long maxMs) {
    if (header == null) return fallbackMs;
    try {
      return Math.min(maxMs, Long.parseLong(header.trim()) * 1_000);
    } catch (NumberFormatException e) {
      return fallbackMs;
    }
  }

  /** Dev login: a client carrying the token of tenant/subject. */
  public HttpJson login(String tenant, String subject) {
    Reply r = post("/session", java.util.Map.of("tenant", tenant, "subject", subject));
    if (r.status() != 200) throw new IllegalStateException("login failed: " + r.status() + " " + r.raw());
    return as(r.text("token"));
  }

  private HttpRequest.Builder builder(String path) {
    // X-Requested-By: the admin port's tasks need it (no browser page can send it cross-origin)
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(requestTimeout)
        .header("X-Requested-By", "flashsale-cli");
    if (token != null) b.header("Authorization", "Bearer " + token);
    return b;
  }

  private Reply send(HttpRequest.Builder b) {
    try {
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      JsonNode body = null;
      try {
        body = r.body().isBlank() ? null : JSON.readTree(r.body());
      } catch (IOException notJson) {
        // plain text (admin tasks): keep raw only
      }
      return new Reply(r.statusCode(), body, r.body(), r.headers());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
