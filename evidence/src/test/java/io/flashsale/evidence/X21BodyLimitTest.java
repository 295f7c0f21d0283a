package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.paymentchannel.CallbackSignatures;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * request bodies over maxBodySize (the default, 16 KiB) are refused with 413 and the stable
 * code BODY_TOO_LARGE before they are read: on the order create, the dev login and the payment
 * callback, whether the size is declared (Content-Length, also with Expect: 100-continue, so the
 * body is never sent) or the body is chunked without a length. Nothing is stored, nothing is
 * stuck: the next normal create and callback go through.
 */
@Tag("engine-independent") // its claim is about the HTTP server's body limit, the same on either engine
class X21BodyLimitTest {
  private static final int LIMIT = 16 * 1024;
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("X-21", "bodies over maxBodySize: 413 BODY_TOO_LARGE, nothing stored");

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void oversizedBodiesAreRefusedBeforeReading() throws Exception {
    stack.sku("sku-x21", 50, 50);
    HttpJson buyer = stack.api.login("t1", "user-2101");
    String id = Buyers.create(buyer, "x21-first", "sku-x21", 1).text("order_id");
    long ordersBefore = stack.sql.count("SELECT count(*) FROM orders");

    String bigOrder = padded("{\"request_key\":\"x21-big\",\"sku\":\"sku-x21\",\"quantity\":1,\"note\":\"", LIMIT + 1);
    for (Mode mode : Mode.values()) {
      Reply r = post("/orders", bigOrder, buyer.token(), null, mode);
      check413(r, "POST /orders, " + LIMIT + "+ bytes, " + mode.text);
    }
    ev.equal(ordersBefore, stack.sql.count("SELECT count(*) FROM orders"), "no order stored");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders WHERE request_key = 'x21-big'"), "not x21-big in particular");

    String bigLogin = padded("{\"tenant\":\"t1\",\"subject\":\"user-2102\",\"pad\":\"", 4 * LIMIT);
    for (Mode mode : Mode.values()) check413(post("/session", bigLogin, null, null, mode), "POST /session, " + mode.text);
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM principals WHERE subject = 'user-2102'"), "no principal registered");

    String bigNotice = padded("{\"notify_id\":\"x21-big\",\"merchant_order\":\"" + id
        + "\",\"kind\":\"DECLINED\",\"amount\":1990,\"pad\":\"", LIMIT + 1);
    String signature = CallbackSignatures.header(stack.wiring.callbackSecret(), System.currentTimeMillis() / 1000,
        bigNotice.getBytes(StandardCharsets.UTF_8));
    for (Mode mode : Mode.values()) {
      check413(post("/callbacks/payment", bigNotice, null, signature, mode), "POST /callbacks/payment (signed), " + mode.text);
    }
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM payment_notification"), "no callback recorded");

    // at the limit exactly, a body is read as usual (here: refused for its content, not its size)
    String atLimit = padded("{\"request_key\":\"x21-edge\",\"sku\":\"sku-x21\",\"quantity\":1,\"note\":\"", LIMIT);
    Reply edge = post("/orders", atLimit, buyer.token(), null, Mode.CHUNKED);
    ev.check(edge.statusCode() == 400 && "INVALID_FIELD".equals(error(edge)),
        "a chunked body of exactly " + LIMIT + " bytes is read: 400 INVALID_FIELD for its 16 KiB note (" + edge.statusCode() + ")");

    // nothing stuck
    ev.equal(201, Buyers.create(buyer, "x21-after", "sku-x21", 1).status(), "the next normal create → 201");
    HttpJson.Reply notice = stack.callback(java.util.Map.of("notify_id", "x21-ok", "merchant_order", id, "kind",
        "DECLINED", "amount", 1990));
    ev.equal(200, notice.status(), "a normal callback → 200");
  }

  private void check413(Reply r, String what) throws Exception {
    ev.check(r.statusCode() == 413 && "BODY_TOO_LARGE".equals(error(r)) && !r.body().contains("Exception"),
        what + " → 413 BODY_TOO_LARGE (" + r.statusCode() + " " + r.body() + ")");
  }

  private enum Mode {
    DECLARED("Content-Length"), EXPECT_CONTINUE("Content-Length + Expect: 100-continue, body never sent"),
    CHUNKED("chunked, no length");

    final String text;

    Mode(String text) {
      this.text = text;
    }
  }

  private Reply post(String path, String body, String bearer, String signature, Mode mode) throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    if (mode == Mode.EXPECT_CONTINUE) return expectContinue(path, bytes.length, bearer, signature);
    HttpRequest.BodyPublisher publisher = mode == Mode.CHUNKED
        ? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes))
        : HttpRequest.BodyPublishers.ofByteArray(bytes);
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + path))
        .header("Content-Type", "application/json").POST(publisher).timeout(java.time.Duration.ofSeconds(30));
    if (bearer != null) b.header("Authorization", "Bearer " + bearer);
    if (signature != null) b.header(CallbackSignatures.HEADER, signature);
    // the service answers 413 and closes before the rest of the body is read; a client still sending
    // may meet the reset before it reads the answer, so a reset is sent again (and counted)
    for (int attempt = 1; ; attempt++) {
      try {
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r.body());
      } catch (java.net.http.HttpTimeoutException noAnswer) {
        throw noAnswer; // a service that does not answer is a failure, not a race
      } catch (java.io.IOException reset) {
        ev.note(path + " " + mode.text + ": attempt " + attempt + " met the connection's close before the answer: " + reset);
        if (attempt == 5) throw reset;
      }
    }
  }

  /**
   * Headers only, with Expect: 100-continue, over a raw socket: the answer comes without one byte
   * of the body having been sent, so the body is provably not what was judged.
   */
  private Reply expectContinue(String path, int length, String bearer, String signature) throws Exception {
    StringBuilder head = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        + "Content-Type: application/json\r\nContent-Length: " + length + "\r\nExpect: 100-continue\r\n");
    if (bearer != null) head.append("Authorization: Bearer ").append(bearer).append("\r\n");
    if (signature != null) head.append(CallbackSignatures.HEADER).append(": ").append(signature).append("\r\n");
    head.append("\r\n");
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", stack.wiring.apiPort())) {
      s.setSoTimeout(30_000);
      s.getOutputStream().write(head.toString().getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      // the 413 closes the connection: read to the end; the JSON is the part from the first brace
      String reply = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int open = reply.indexOf('{');
      int close = reply.lastIndexOf('}');
      return new Reply(Integer.parseInt(reply.substring(9, 12)), open < 0 || close < open ? reply
          : reply.substring(open, close + 1));
    }
  }

  private record Reply(int statusCode, String body) {}

  private static String error(Reply r) {
    try {
      JsonNode n = HttpJson.JSON.readTree(r.body());
      return n == null ? null : n.path("code").asText(null);
    } catch (Exception e) {
      return null;
    }
  }

  /** The prefix, then x's, then the closing quote and brace: exactly {@code size} bytes of JSON. */
  private static String padded(String prefix, int size) {
    StringBuilder sb = new StringBuilder(prefix);
    while (sb.length() < size - 2) sb.append('x');
    return sb.append("\"}").toString();
  }
}
