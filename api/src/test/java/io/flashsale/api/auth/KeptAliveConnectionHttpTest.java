package io.flashsale.api.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.glassfish.jersey.server.ServerProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Requests that follow one another on a kept-alive connection, as RestApi wires the service
 * (answers streamed without a computed Content-Length, the exact header cache, the session filter,
 * the body limit): each answer belongs to its request, whatever the request before it was.
 * A token that differs from an earlier one on the connection only in the case of a letter is read
 * as sent; a request refused before its body was read (401, 403, 413) does not cost the client its
 * answer nor the next request, whether the body came with the headers, after them, chunked, or
 * after a 100 Continue; a body sent too slowly is given up and the connection closed.
 */
@ExtendWith(DropwizardExtensionsSupport.class)
class KeptAliveConnectionHttpTest {
  static final int LIMIT = 16 * 1024;
  static final TokenService TOKENS = new TokenService("kept-alive-test-secret", 3600, Clock.systemUTC());

  public static final class TestApp extends Application<Configuration> {
    @Override
    public void run(Configuration cfg, Environment env) {
      env.jersey().property(ServerProperties.OUTBOUND_CONTENT_LENGTH_BUFFER, 0);
      AuthAndLimitWiring.register(env, TOKENS, LIMIT, new Mine());
    }
  }

  @Path("/")
  @Produces(MediaType.APPLICATION_JSON)
  public static final class Mine {
    @POST
    @Path("mine")
    @Consumes(MediaType.APPLICATION_JSON)
    public Map<String, Object> post(@Auth Caller caller, JsonNode body) {
      return Map.of("subject", caller.subject());
    }

    @GET
    @Path("mine")
    public Map<String, Object> get(@Auth Caller caller) {
      return Map.of("subject", caller.subject());
    }
  }

  static final DropwizardAppExtension<Configuration> APP = new DropwizardAppExtension<>(TestApp.class, LoopbackConfig.create());

  /** The token with the first letter of its signature in the other case: a forgery only case tells apart. */
  private static String caseFlipped(String token) {
    char[] c = token.toCharArray();
    for (int i = token.lastIndexOf('.') + 1; i < c.length; i++) {
      if (Character.isLetter(c[i])) {
        c[i] = Character.isUpperCase(c[i]) ? Character.toLowerCase(c[i]) : Character.toUpperCase(c[i]);
        return new String(c);
      }
    }
    throw new IllegalStateException("no letter in " + token);
  }

  private static String json(int bytes) {
    StringBuilder sb = new StringBuilder("{\"pad\":\"");
    while (sb.length() < bytes - 2) sb.append('x');
    return sb.append("\"}").toString();
  }

  @Test
  void aTokenDifferingOnlyInCaseIsReadAsSentOnTheSameConnection() throws Exception {
    String token = TOKENS.issue("t1", "user-1");
    String forged = caseFlipped(token);
    // both requests on one connection, the forged one first
    String reply = exchange("GET /mine HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + forged + "\r\n\r\n"
        + "GET /mine HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\nConnection: close\r\n\r\n");
    List<String> statuses = statusLines(reply);
    assertEquals(List.of("HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK"), statuses, reply);
    assertTrue(reply.contains("\"subject\":\"user-1\""), reply);

    // the session cookie the same way: the valid one after the forged one is still 403 CSRF
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> refused = http.send(post("/mine", HttpRequest.BodyPublishers.ofString("{}"))
        .header("Cookie", SessionAuthFilter.COOKIE + "=" + forged).build(), HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> noCsrf = http.send(post("/mine", HttpRequest.BodyPublishers.ofString("{}"))
        .header("Cookie", SessionAuthFilter.COOKIE + "=" + token).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(401, refused.statusCode(), refused.body());
    assertEquals(403, noCsrf.statusCode(), noCsrf.body());
    assertTrue(noCsrf.body().contains("\"CSRF\""), noCsrf.body());
  }

  @Test
  void aRefusalReadsTheBodyThatComesAfterItsHeadersAndKeepsTheConnection() throws Exception {
    // the 401 is decided on the headers; the body comes later, then the next request
    try (Socket s = new Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(20_000);
      OutputStream out = s.getOutputStream();
      String body = json(5000);
      out.write(("POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nCookie: "
          + SessionAuthFilter.COOKIE + "=forged\r\nContent-Length: " + body.length() + "\r\n\r\n"
          + body.substring(0, 10)).getBytes(StandardCharsets.US_ASCII));
      out.flush();
      Thread.sleep(300);
      out.write((body.substring(10) + "GET /mine HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
          + TOKENS.issue("t1", "user-2") + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String reply = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertEquals(List.of("HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK"), statusLines(reply), reply);
      assertTrue(reply.contains("\"subject\":\"user-2\""), reply);
    }
  }

  @Test
  void a413ReadsTheRestOfABodyStillBeingSentSoTheSenderGetsItsAnswer() throws Exception {
    // 40 KB declared, sent in 1 KB pieces: every piece is taken (no reset while the client sends),
    // the 413 comes, and the connection serves the next request
    try (Socket s = new Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(20_000);
      OutputStream out = s.getOutputStream();
      int size = 40_000;
      out.write(("POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + size
          + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      byte[] piece = new byte[1000];
      java.util.Arrays.fill(piece, (byte) 'x');
      for (int sent = 0; sent < size; sent += piece.length) {
        Thread.sleep(5);
        out.write(piece);
        out.flush();
      }
      out.write(("GET /mine HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKENS.issue("t1", "user-3")
          + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String reply = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertEquals(List.of("HTTP/1.1 413 Payload Too Large", "HTTP/1.1 200 OK"), statusLines(reply), reply);
      assertTrue(reply.contains("\"BODY_TOO_LARGE\""), reply);
    }
  }

  @Test
  void aBodyPastTheDrainLimitIsNotReadAndTheAnswerSaysClose() throws Exception {
    try (Socket s = new Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(20_000);
      s.getOutputStream().write(("POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
          + (BodyLimit.DRAIN_LIMIT + 1) + "\r\n\r\n{").getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      byte[] head = new byte[1024];
      InputStream in = s.getInputStream();
      int n = in.read(head);
      String reply = new String(head, 0, Math.max(n, 0), StandardCharsets.ISO_8859_1);
      assertTrue(reply.startsWith("HTTP/1.1 413"), reply);
      assertTrue(reply.toLowerCase(Locale.ROOT).contains("connection: close"), reply);
    }
  }

  @Test
  void a413MidStreamAfter100ContinueReadsTheRestAndKeepsTheConnection() throws Exception {
    // the client waits for 100 Continue, then streams a chunked body past the limit: it is sending
    // when the 413 is decided, so the rest is read and the connection serves the next request
    try (Socket s = new Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(20_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      out.write(("POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer "
          + TOKENS.issue("t1", "user-5") + "\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String interim = readHead(in);
      assertTrue(interim.startsWith("HTTP/1.1 100"), interim);
      String body = json(3 * LIMIT);
      for (int sent = 0; sent < body.length(); sent += 1000) {
        Thread.sleep(5);
        String piece = body.substring(sent, Math.min(body.length(), sent + 1000));
        out.write((Integer.toHexString(piece.length()) + "\r\n" + piece + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
      out.write(("0\r\n\r\nGET /mine HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKENS.issue("t1", "user-5")
          + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String reply = interim + new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      assertEquals(List.of("HTTP/1.1 100 Continue", "HTTP/1.1 413 Payload Too Large", "HTTP/1.1 200 OK"),
          statusLines(reply), reply);
      assertTrue(reply.contains("\"subject\":\"user-5\""), reply);
    }
  }

  @Test
  void aMalformedBodyAfter100ContinueReadsTheRestAndKeepsTheConnection() throws Exception {
    // the JSON parser fails early in a declared body the client sends after 100 Continue
    try (Socket s = new Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(20_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      String body = "{" + "x".repeat(LIMIT - 2);
      out.write(("POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer "
          + TOKENS.issue("t1", "user-6") + "\r\nExpect: 100-continue\r\nContent-Length: " + body.length() + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String interim = readHead(in);
      assertTrue(interim.startsWith("HTTP/1.1 100"), interim);
      for (int sent = 0; sent < body.length(); sent += 1000) {
        Thread.sleep(5);
        out.write(body.substring(sent, Math.min(body.length(), sent + 1000)).getBytes(StandardCharsets.US_ASCII));
        out.flush();
      }
      out.write(("GET /mine HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKENS.issue("t1", "user-6")
          + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String reply = interim + new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      assertEquals(List.of("HTTP/1.1 100 Continue", "HTTP/1.1 400 Bad Request", "HTTP/1.1 200 OK"),
          statusLines(reply), reply);
      assertTrue(reply.contains("\"subject\":\"user-6\""), reply);
    }
  }

  @Test
  void aRefusalGivesUpASlowBodyAndClosesTheConnection() throws Exception {
    // a 401 whose body trickles in a byte at a time, far slower than DRAIN_TIME allows for: the
    // drain gives up, the answer says close and the server ends the connection while the client
    // would still be sending for many times DRAIN_TIME (how long the drain took is printed only)
    int size = 2000;
    long trickle = 20; // ms per byte: 40 s for the body, against a DRAIN_TIME of seconds
    try (Socket s = new Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(20_000);
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      out.write(("POST /mine HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nCookie: "
          + SessionAuthFilter.COOKIE + "=forged\r\nContent-Length: " + size + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      long start = System.nanoTime();
      int sent = 0;
      for (; sent < size && in.available() == 0; sent++) {
        out.write('x');
        out.flush();
        Thread.sleep(trickle);
      }
      System.out.println("slow body: answer after " + (System.nanoTime() - start) / 1_000_000 + " ms, "
          + sent + " of " + size + " bytes sent");
      assertTrue(sent < size, "the whole slow body was read before the answer");
      String head = readHead(in);
      assertTrue(head.startsWith("HTTP/1.1 401"), head);
      assertTrue(head.toLowerCase(Locale.ROOT).contains("connection: close"), head);
      // the server ends the connection: end of stream (or a reset), not a read timeout
      try {
        in.readAllBytes();
      } catch (java.net.SocketException reset) {
        System.out.println("slow body: connection ended with " + reset);
      }
    }
  }

  @Test
  void everyAnswerOnOneClientBelongsToItsRequest() throws Exception {
    // one JDK client (its connections kept alive), refusals before the body mixed with accepted
    // requests: bodies declared or chunked, small to over the limit, forged tokens one case away
    String token = TOKENS.issue("t1", "user-4");
    String forged = caseFlipped(token);
    Random random = new Random(19);
    List<String> wrong = new ArrayList<>();
    for (HttpClient.Version version : HttpClient.Version.values()) {
      HttpClient http = HttpClient.newBuilder().version(version).build();
      for (int i = 0; i < 400; i++) {
        int kind = random.nextInt(5);
        int size = kind == 3 ? LIMIT + 1 + random.nextInt(3 * LIMIT) : new int[] {2, 300, 5000, LIMIT}[random.nextInt(4)];
        String body = kind == 4 ? "{\"pad\":\"x\"}" : json(size);
        boolean chunked = random.nextBoolean();
        HttpRequest.BodyPublisher publisher = chunked
            ? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)))
            : HttpRequest.BodyPublishers.ofString(body);
        HttpRequest.Builder b = post("/mine", publisher);
        int want;
        String code;
        switch (kind) {
          case 0 -> { b.header("Authorization", "Bearer " + forged); want = 401; code = "UNAUTHENTICATED"; }
          case 1 -> { b.header("Cookie", SessionAuthFilter.COOKIE + "=" + forged); want = 401; code = "UNAUTHENTICATED"; }
          case 2 -> { b.header("Cookie", SessionAuthFilter.COOKIE + "=" + token); want = 403; code = "CSRF"; }
          case 3 -> { b.header("Authorization", "Bearer " + token); want = 413; code = "BODY_TOO_LARGE"; }
          default -> { b.header("Authorization", "Bearer " + token); want = 200; code = "user-4"; }
        }
        String what = version + " #" + i + " kind " + kind + " " + body.length() + (chunked ? " chunked" : " declared");
        try {
          HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
          if (r.statusCode() != want || !r.body().contains("\"" + code + "\"")) {
            wrong.add(what + ": " + r.statusCode() + " " + r.body());
          }
        } catch (java.io.IOException e) {
          wrong.add(what + ": " + e);
        }
      }
    }
    System.out.println("kept-alive mix: " + wrong.size() + " wrong of 800");
    assertEquals(List.of(), wrong);
  }

  private static HttpRequest.Builder post(String path, HttpRequest.BodyPublisher body) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + APP.getLocalPort() + path))
        .header("Content-Type", "application/json").timeout(java.time.Duration.ofSeconds(30)).POST(body);
  }

  /** Reads one answer's head, up to and with its blank line, byte by byte so nothing after it is taken. */
  private static String readHead(InputStream in) throws java.io.IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) break;
      head.append((char) b);
    }
    return head.toString();
  }

  private static String exchange(String requests) throws Exception {
    try (Socket s = new Socket("127.0.0.1", APP.getLocalPort())) {
      s.setSoTimeout(20_000);
      s.getOutputStream().write(requests.getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  private static List<String> statusLines(String reply) {
    List<String> lines = new ArrayList<>();
    for (String line : reply.split("\r\n")) if (line.startsWith("HTTP/1.1 ")) lines.add(line);
    return lines;
  }
}
