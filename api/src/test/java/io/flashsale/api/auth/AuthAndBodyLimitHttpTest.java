package io.flashsale.api.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.auth.Auth;
import io.dropwizard.auth.AuthDynamicFeature;
import io.dropwizard.auth.AuthValueFactoryProvider;
import io.dropwizard.core.Application;
import io.dropwizard.core.Configuration;
import io.dropwizard.core.setup.Environment;
import io.dropwizard.testing.junit5.DropwizardAppExtension;
import io.dropwizard.testing.junit5.DropwizardExtensionsSupport;
import io.flashsale.api.LoopbackConfig;
import io.flashsale.api.core.BodyLimit;
import io.flashsale.api.core.ErrorMappers;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The session filter and the body limit as the service wires them, over real HTTP on Jetty: a
 * forged or expired cookie is 401 even on an unsafe request without a CSRF header; bodies over
 * the limit are 413 BODY_TOO_LARGE before any resource runs, by Content-Length and when chunked.
 */
@ExtendWith(DropwizardExtensionsSupport.class)
class AuthAndBodyLimitHttpTest {
  static final long LIMIT = 1024;
  static final TokenService TOKENS = new TokenService("http-test-secret", 60, Clock.systemUTC());
  static final AtomicInteger CALLS = new AtomicInteger();
  private static final ObjectMapper JSON = new ObjectMapper();

  public static final class TestApp extends Application<Configuration> {
    @Override
    public void run(Configuration cfg, Environment env) {
      AuthAndLimitWiring.register(env, TOKENS, LIMIT, new Echo());
    }
  }

  @Path("/")
  @Produces(MediaType.APPLICATION_JSON)
  public static final class Echo {
    @POST
    @Path("json")
    @Consumes(MediaType.APPLICATION_JSON)
    public Map<String, Object> json(JsonNode body) {
      CALLS.incrementAndGet();
      return Map.of("fields", body.size());
    }

    @POST
    @Path("raw")
    @Consumes(MediaType.APPLICATION_JSON)
    public Map<String, Object> raw(byte[] body) {
      CALLS.incrementAndGet();
      return Map.of("bytes", body.length);
    }

    @POST
    @Path("mine")
    @Consumes(MediaType.APPLICATION_JSON)
    public Map<String, Object> mine(@Auth Caller caller, JsonNode body) {
      CALLS.incrementAndGet();
      return Map.of("subject", caller.subject());
    }

    @GET
    @Path("mine")
    public Map<String, Object> get(@Auth Caller caller) {
      return Map.of("subject", caller.subject());
    }
  }

  static final DropwizardAppExtension<Configuration> APP = new DropwizardAppExtension<>(TestApp.class, LoopbackConfig.create());
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> post(String path, HttpRequest.BodyPublisher body, Map<String, String> headers)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + APP.getLocalPort() + path))
        .header("Content-Type", "application/json").POST(body);
    headers.forEach(b::header);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String error(HttpResponse<String> r) throws Exception {
    String type = r.headers().firstValue("Content-Type").orElse("");
    if (!type.startsWith("application/problem+json")) throw new AssertionError("not a problem detail: " + type + " " + r.body());
    return JSON.readTree(r.body()).path("code").asText();
  }

  private static String json(int bytes) {
    StringBuilder sb = new StringBuilder("{\"pad\":\"");
    while (sb.length() < bytes - 2) sb.append('x');
    return sb.append("\"}").toString();
  }

  /** A body without Content-Length: the client has to send it chunked. */
  private static HttpRequest.BodyPublisher chunked(String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes));
  }

  /** An answer about a caller is nobody's to keep: Cache-Control: no-store, refusals included. */
  @Test
  void answersAreNotStoredByCaches() throws Exception {
    String token = TOKENS.issue("t1", "user-nostore");
    HttpResponse<String> mine = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + APP.getLocalPort() + "/mine"))
        .header("Authorization", "Bearer " + token).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, mine.statusCode(), mine.body());
    assertEquals("no-store", mine.headers().firstValue("Cache-Control").orElse("(none)"));
    HttpResponse<String> refused = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + APP.getLocalPort()
        + "/mine")).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(401, refused.statusCode());
    assertEquals("no-store", refused.headers().firstValue("Cache-Control").orElse("(none)"));
  }

  /** A body is one JSON value with each key once: read one way by every reader, or refused. */
  @Test
  void aDuplicateKeyOrTrailingDataIsRefusedBeforeTheResource() throws Exception {
    int before = CALLS.get();
    for (String bad : new String[] {"{\"quantity\":1,\"quantity\":3}", "{\"a\":{\"b\":1,\"b\":2}}",
        "{\"a\":1}{\"b\":2}", "{\"a\":1} x", "{\"a\":1}]"}) {
      HttpResponse<String> r = post("/json", HttpRequest.BodyPublishers.ofString(bad), Map.of());
      assertEquals(400, r.statusCode(), bad + " -> " + r.body());
      assertEquals("MALFORMED_JSON", error(r), bad);
    }
    assertEquals(before, CALLS.get(), "no refused body reached the resource");
    HttpResponse<String> twice = post("/json", HttpRequest.BodyPublishers.ofString("{\"quantity\":1,\"quantity\":3}"), Map.of());
    assertEquals("the request body names the field 'quantity' more than once", JSON.readTree(twice.body()).path("detail").asText());
    HttpResponse<String> two = post("/json", HttpRequest.BodyPublishers.ofString("{\"a\":1}{\"b\":2}"), Map.of());
    assertEquals("the request body holds more than one JSON value", JSON.readTree(two.body()).path("detail").asText());
    HttpResponse<String> fine = post("/json", HttpRequest.BodyPublishers.ofString("{\"a\":1,\"b\":{\"a\":2}}  \n"), Map.of());
    assertEquals(200, fine.statusCode(), fine.body());
    assertEquals(2, JSON.readTree(fine.body()).path("fields").asInt(), "the same name in another object is no duplicate");
  }

  @Test
  void aForgedOrExpiredCookieIs401EvenWithoutCsrfHeader() throws Exception {
    String token = TOKENS.issue("t1", "user-1");
    int at = token.length() - 10;
    // a digit has no other case: the forgery differs from the token in more than letter case
    String forged = token.substring(0, at) + (token.charAt(at) == '0' ? '1' : '0') + token.substring(at + 1);
    String expired = TOKENS.issue("t1", "user-1", Clock.systemUTC().instant().getEpochSecond() - 5);
    for (String bad : new String[] {forged, expired, "garbage"}) {
      HttpResponse<String> r = post("/mine", HttpRequest.BodyPublishers.ofString("{}"),
          Map.of("Cookie", SessionAuthFilter.COOKIE + "=" + bad));
      assertEquals(401, r.statusCode(), r.body());
      assertEquals("UNAUTHENTICATED", error(r));
    }
    // a valid cookie without the CSRF header is still refused, with 403 CSRF; with it, accepted
    HttpResponse<String> noCsrf = post("/mine", HttpRequest.BodyPublishers.ofString("{}"),
        Map.of("Cookie", SessionAuthFilter.COOKIE + "=" + token));
    assertEquals(403, noCsrf.statusCode());
    assertEquals("CSRF", error(noCsrf));
    HttpResponse<String> ok = post("/mine", HttpRequest.BodyPublishers.ofString("{}"),
        Map.of("Cookie", SessionAuthFilter.COOKIE + "=" + token, SessionAuthFilter.CSRF_HEADER, TOKENS.csrfFor(token)));
    assertEquals(200, ok.statusCode(), ok.body());
  }

  @Test
  void refusedPostsLeaveTheConnectionUsable() throws Exception {
    // a refusal answered before the body is read (401, 403 CSRF) must not cost the next request on
    // the kept-alive connection; each token is different, so their bytes vary too
    String body = "{\"request_key\":\"k\",\"sku\":\"sku-1\",\"quantity\":1}";
    java.util.Random random = new java.util.Random(20);
    java.util.List<String> wrong = new java.util.ArrayList<>();
    for (int i = 0; i < 300; i++) {
      String token = TOKENS.issue("t" + random.nextInt(100), "user-" + Long.toString(random.nextLong() & Long.MAX_VALUE, 36),
          Clock.systemUTC().instant().getEpochSecond() + 5 + random.nextInt(50));
      String forged = token.substring(0, token.length() - 10) + "AAAA" + token.substring(token.length() - 6);
      try {
        HttpResponse<String> refused = post("/mine", HttpRequest.BodyPublishers.ofString(body),
            Map.of("Cookie", SessionAuthFilter.COOKIE + "=" + forged));
        HttpResponse<String> noCsrf = post("/mine", HttpRequest.BodyPublishers.ofString(body),
            Map.of("Cookie", SessionAuthFilter.COOKIE + "=" + token));
        if (refused.statusCode() != 401 || noCsrf.statusCode() != 403 || !"CSRF".equals(error(noCsrf))) {
          wrong.add(i + ": " + refused.statusCode() + " then " + noCsrf.statusCode() + " " + noCsrf.body());
        }
      } catch (java.io.IOException e) {
        wrong.add(i + ": " + e);
      }
    }
    assertEquals(java.util.List.of(), wrong);
    // an accepted request keeps its connection open
    HttpResponse<String> ok = post("/json", HttpRequest.BodyPublishers.ofString(body), Map.of());
    assertEquals(200, ok.statusCode());
    assertFalse(ok.headers().firstValue("Connection").orElse("").equalsIgnoreCase("close"));
  }

  @Test
  void aRefusalReadsTheRestOfTheBodyAndKeepsTheConnection() throws Exception {
    // a client that declares 100 bytes and sends 10, then the rest: the 401 comes once the body is
    // in, and the connection stays open (closing it with the body still coming resets it, and a
    // client still sending loses the answer)
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(("POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Cookie: " + SessionAuthFilter.COOKIE + "=forged\r\nContent-Length: 100\r\n\r\n{\"a\":\"1234")
          .getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      Thread.sleep(200);
      s.getOutputStream().write((json(90).substring(0, 88) + "\"}").getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      byte[] head = new byte[512];
      int n = s.getInputStream().read(head);
      String reply = new String(head, 0, Math.max(n, 0), StandardCharsets.US_ASCII);
      assertTrue(reply.startsWith("HTTP/1.1 401"), reply);
      assertFalse(reply.toLowerCase(java.util.Locale.ROOT).contains("connection: close"), reply);
    }
  }

  @Test
  void bodiesOverTheLimitAre413BeforeTheResourceRuns() throws Exception {
    int before = CALLS.get();
    for (String path : new String[] {"/json", "/raw"}) {
      HttpResponse<String> declared = post(path, HttpRequest.BodyPublishers.ofString(json((int) LIMIT + 1)), Map.of());
      assertEquals(413, declared.statusCode(), path + " " + declared.body());
      assertEquals(BodyLimit.CODE, error(declared));
      assertFalse(declared.body().contains("Exception"), declared.body());

      HttpResponse<String> streamed = post(path, chunked(json(8 * (int) LIMIT)), Map.of());
      assertEquals(413, streamed.statusCode(), path + " chunked " + streamed.body());
      assertEquals(BodyLimit.CODE, error(streamed));
    }
    assertEquals(before, CALLS.get(), "no resource method ran");

    // before authentication: a too-large body needs no valid token to be refused
    HttpResponse<String> unauthenticated = post("/mine", HttpRequest.BodyPublishers.ofString(json(4 * (int) LIMIT)),
        Map.of());
    assertEquals(413, unauthenticated.statusCode());

    // at the limit, declared or chunked, the body goes through
    assertEquals(200, post("/raw", HttpRequest.BodyPublishers.ofString(json((int) LIMIT)), Map.of()).statusCode());
    HttpResponse<String> chunkedOk = post("/json", chunked(json((int) LIMIT)), Map.of());
    assertEquals(200, chunkedOk.statusCode(), chunkedOk.body());
    assertTrue(CALLS.get() == before + 2);
  }

  @Test
  void aHugeDeclaredLengthIs413AtOnce() throws Exception {
    // HttpClient computes Content-Length itself; a raw socket declares what a hostile client would
    // (past int range: a length parsed as an int would read as "unknown" and be let through)
    String reply = raw("Content-Length: 9000000000000000000\r\n\r\n{}");
    assertTrue(reply.startsWith("HTTP/1.1 413"), reply);
    assertTrue(reply.contains("\"error\":\"BODY_TOO_LARGE\""), reply);
    // past long range the container itself refuses the request line's framing; no stack trace either
    reply = raw("Content-Length: 99999999999999999999999\r\n\r\n{}");
    assertTrue(reply.startsWith("HTTP/1.1 400") || reply.startsWith("HTTP/1.1 413"), reply);
    assertFalse(reply.contains("Exception"), reply);
  }

  private static String raw(String lengthAndBody) throws Exception {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(("POST /json HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Connection: close\r\n" + lengthAndBody).getBytes(StandardCharsets.US_ASCII));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    }
  }
}
