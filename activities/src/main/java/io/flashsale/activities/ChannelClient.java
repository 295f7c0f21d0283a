package io.flashsale.activities;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.workflows.ChannelAnswer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Map;

/**
 * HTTP client of the payment channel (docs/DESIGN.md §Channel contract). A timeout cannot tell
 * "never arrived" from "done, reply lost", so every call without a definite reply answers UNKNOWN.
 */
public final class ChannelClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final String baseUrl;
  private final String notifyUrl;
  private final Duration timeout;

  public ChannelClient(String baseUrl, String notifyUrl, Duration timeout) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.notifyUrl = notifyUrl;
    this.timeout = timeout;
  }

  public String baseUrl() {
    return baseUrl;
  }

  public ChannelAnswer charge(String orderId, long amount) {
    return call("charge", post("/charge", Map.of("merchant_order", orderId, "amount", amount, "notify_url", notifyUrl)),
        "result");
  }

  public ChannelAnswer query(String orderId) {
    return call("query", HttpRequest.newBuilder(URI.create(baseUrl + "/charges/" + orderId)).timeout(timeout).GET().build(),
        "status");
  }

  public ChannelAnswer close(String orderId) {
    return call("close", post("/close", Map.of("merchant_order", orderId)), "status");
  }

  public ChannelAnswer refund(String orderId, String refundKey, long amount) {
    return call("refund", post("/refund", Map.of("merchant_order", orderId, "refund_key", refundKey, "amount", amount)),
        "result");
  }

  /** The ledger, for reconciliation (no short timeout: it is not on the payment path). */
  public JsonNode statement() throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(
        HttpRequest.newBuilder(URI.create(baseUrl + "/statement")).timeout(Duration.ofSeconds(10)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) throw new IOException("statement answered " + r.statusCode());
    return JSON.readTree(r.body());
  }

  /**
   * Liveness for the health check: one query of a probe merchant order, which any channel of
   * this contract answers (NOT_FOUND) cheaply, unlike the whole statement.
   */
  public boolean reachable() {
    return query("health-probe").definite();
  }

  private HttpRequest post(String path, Map<String, Object> body) {
    try {
      return HttpRequest.newBuilder(URI.create(baseUrl + path))
          .timeout(timeout)
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
          .build();
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  private ChannelAnswer call(String what, HttpRequest request, String field) {
    HttpResponse<String> r;
    try {
      r = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (HttpTimeoutException e) {
      return new ChannelAnswer(ChannelAnswer.UNKNOWN, null, "timeout");
    } catch (IOException e) {
      return new ChannelAnswer(ChannelAnswer.UNKNOWN, null, "io error");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new ChannelAnswer(ChannelAnswer.UNKNOWN, null, "interrupted");
    }
    try {
      JsonNode body = JSON.readTree(r.body());
      if (r.statusCode() == 200 || (r.statusCode() == 409 && body.has("result"))) {
        String result = body.path(field).asText(body.path("result").asText(body.path("status").asText()));
        return new ChannelAnswer(result, body.path("txn").asText(null), what + " " + r.statusCode());
      }
      return new ChannelAnswer(ChannelAnswer.UNKNOWN, null, what + " answered " + r.statusCode() + " " + r.body());
    } catch (IOException e) {
      return new ChannelAnswer(ChannelAnswer.UNKNOWN, null, what + " unreadable reply");
    }
  }
}
