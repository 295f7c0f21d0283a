package io.flashsale.channel;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/** Test client for the stub's HTTP API. */
final class StubClient {
  record Resp(int status, JsonNode body) {}

  private final String baseUrl;
  /** The merchant key sent as a bearer token; null sends none. */
  private final String merchantKey;
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  StubClient(String baseUrl, String merchantKey) {
    this.baseUrl = baseUrl;
    this.merchantKey = merchantKey;
  }

  private HttpRequest.Builder request(String path, Duration timeout) {
    // X-Requested-By: the lab endpoints need it (as the admin port's tasks do)
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(timeout)
        .header("X-Requested-By", "stub-test");
    return merchantKey == null ? b : b.header("Authorization", "Bearer " + merchantKey);
  }

  Resp post(String path, Map<String, ?> body) throws IOException, InterruptedException {
    return post(path, Json.MAPPER.writeValueAsString(body), Duration.ofSeconds(10));
  }

  Resp post(String path, Map<String, ?> body, Duration timeout) throws IOException, InterruptedException {
    return post(path, Json.MAPPER.writeValueAsString(body), timeout);
  }

  Resp post(String path, String rawBody, Duration timeout) throws IOException, InterruptedException {
    HttpRequest req = request(path, timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(rawBody))
        .build();
    return toResp(http.send(req, HttpResponse.BodyHandlers.ofString()));
  }

  Resp get(String path) throws IOException, InterruptedException {
    HttpRequest req = request(path, Duration.ofSeconds(10)).GET().build();
    return toResp(http.send(req, HttpResponse.BodyHandlers.ofString()));
  }

  private static Resp toResp(HttpResponse<String> r) throws IOException {
    return new Resp(r.statusCode(), r.body().isEmpty() ? null : Json.MAPPER.readTree(r.body()));
  }
}
