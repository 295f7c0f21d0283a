package io.flashsale.channel;

import io.flashsale.paymentchannel.CallbackSignatures;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.channel.StubClient.Resp;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class ChannelStubTest {
  private static final String SECRET = "test-secret";
  private static final String MERCHANT_KEY = "test-merchant-key";
  private static ChannelStub stub;
  private static CallbackReceiver receiver;
  private static StubClient client;

  @BeforeAll
  static void startAll() throws Exception {
    receiver = new CallbackReceiver();
    stub = ChannelStub.startWithTestSurface(settings(SECRET));
    client = new StubClient(stub.baseUrl(), MERCHANT_KEY);
  }

  private static ChannelStub.Settings settings(String callbackSecret) {
    return ChannelStub.Settings.local(MERCHANT_KEY, callbackSecret, Set.of(receiver.url()));
  }

  @AfterAll
  static void stopAll() {
    receiver.close();
    stub.stop();
  }

  @BeforeEach
  void reset() throws Exception {
    assertEquals(200, client.post("/_reset", Map.of()).status());
  }

  private Resp charge(String mo, long amount) throws Exception {
    return client.post("/charge", Map.of("merchant_order", mo, "amount", amount, "notify_url", receiver.url()));
  }

  private Resp refund(String mo, String key, long amount, Duration timeout) throws Exception {
    return client.post("/refund", Map.of("merchant_order", mo, "refund_key", key, "amount", amount), timeout);
  }

  private Resp faults(Map<String, ?> rule) throws Exception {
    Resp r = client.post("/_faults", rule);
    assertEquals(200, r.status());
    assertTrue(r.body().path("ok").asBoolean());
    return r;
  }

  private List<JsonNode> rows() throws Exception {
    Resp r = client.get("/statement");
    assertEquals(200, r.status());
    return List.copyOf(toList(r.body().path("rows")));
  }

  private static List<JsonNode> toList(JsonNode array) {
    List<JsonNode> out = new java.util.ArrayList<>();
    array.forEach(out::add);
    return out;
  }

  @Test
  void chargeIsIdempotentByMerchantOrder() throws Exception {
    Resp first = charge("mo-1", 1000);
    Resp second = charge("mo-1", 1000);
    assertEquals(200, first.status());
    assertEquals("CHARGED", first.body().path("result").asText());
    assertTrue(first.body().path("txn").asText().matches("txn-\\d{6}"));
    assertEquals(first.body(), second.body());

    List<JsonNode> rows = rows();
    assertEquals(1, rows.size());
    JsonNode row = rows.get(0);
    assertEquals(1, row.path("seq").asLong());
    assertEquals("CHARGE", row.path("type").asText());
    assertEquals("mo-1", row.path("merchant_order").asText());
    assertEquals(1000, row.path("amount").asLong());
    assertEquals(first.body().path("txn").asText(), row.path("txn").asText());
    assertFalse(row.has("refund_key"));
    assertNotNull(java.time.Instant.parse(row.path("at").asText()));

    JsonNode status = client.get("/charges/mo-1").body();
    assertEquals("CHARGED", status.path("status").asText());
    assertEquals(1000, status.path("amount").asLong());
    assertEquals(first.body().path("txn").asText(), status.path("txn").asText());
    assertEquals("NOT_FOUND", client.get("/charges/nobody").body().path("status").asText());

    List<CallbackReceiver.Received> cbs = receiver.await("mo-1", 1, 5_000);
    Thread.sleep(300);
    assertEquals(1, receiver.of("mo-1").size(), "one callback per charge event, not per request");
    JsonNode cb = cbs.get(0).json();
    assertEquals("CHARGED", cb.path("kind").asText());
    assertEquals(1000, cb.path("amount").asLong());
    assertEquals(first.body().path("txn").asText(), cb.path("txn").asText());
    assertTrue(cb.path("notify_id").asText().matches("ntf-\\d{6}"));
  }

  @Test
  void otherAmountForSameOrderIs422() throws Exception {
    assertEquals(200, charge("mo-2", 1000).status());
    Resp r = charge("mo-2", 999);
    assertEquals(422, r.status());
    assertEquals("AMOUNT_MISMATCH", r.body().path("error").asText());
    assertEquals(1, rows().size());
  }

  @Test
  void declineRuleDeclinesWithoutLedgerRow() throws Exception {
    faults(Map.of("merchant_order", "mo-3", "decline", true));
    Resp r = charge("mo-3", 500);
    assertEquals(200, r.status());
    assertEquals("DECLINED", r.body().path("result").asText());
    assertEquals(r.body(), charge("mo-3", 500).body());
    assertEquals("DECLINED", client.get("/charges/mo-3").body().path("status").asText());
    assertEquals(0, rows().size());
    assertEquals("DECLINED", receiver.await("mo-3", 1, 5_000).get(0).json().path("kind").asText());
    // other orders are not affected
    assertEquals("CHARGED", charge("mo-3b", 500).body().path("result").asText());
  }

  @Test
  void defaultRuleAppliesToOrdersWithoutOwnRule() throws Exception {
    faults(Map.of("decline", true));
    faults(Map.of("merchant_order", "mo-own", "reply_delay_ms", 0));
    assertEquals("DECLINED", charge("mo-any", 100).body().path("result").asText());
    assertEquals("CHARGED", charge("mo-own", 100).body().path("result").asText());
  }

  @Test
  void closeDuringHeldChargeWinsAndChargeIsRefused() throws Exception {
    faults(Map.of("merchant_order", "mo-4", "hold_request_ms", 800));
    CompletableFuture<Resp> late = CompletableFuture.supplyAsync(() -> {
      try {
        return charge("mo-4", 700);
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    Thread.sleep(100);
    Resp close = client.post("/close", Map.of("merchant_order", "mo-4"));
    assertEquals(200, close.status());
    assertEquals("CLOSED", close.body().path("status").asText());
    assertFalse(late.isDone(), "charge is still held");

    Resp charged = late.get();
    assertEquals(409, charged.status());
    assertEquals("CLOSED", charged.body().path("result").asText());
    assertEquals(409, charge("mo-4", 700).status());
    assertEquals("CLOSED", client.get("/charges/mo-4").body().path("status").asText());
    assertEquals(0, rows().size());
    JsonNode stats = client.get("/stats").body();
    assertEquals(2, stats.path("charge_requests").asLong());
    assertEquals(1, stats.path("close_requests").asLong());
    Thread.sleep(200);
    assertTrue(receiver.of("mo-4").isEmpty());
  }

  @Test
  void closeAfterChargeAnswersExistingStatus() throws Exception {
    String txn = charge("mo-5", 300).body().path("txn").asText();
    JsonNode close = client.post("/close", Map.of("merchant_order", "mo-5")).body();
    assertEquals("CHARGED", close.path("status").asText());
    assertEquals(txn, close.path("txn").asText());
    assertEquals("CHARGED", client.get("/charges/mo-5").body().path("status").asText());
  }

  @Test
  void replyDelayRecordsChargeButClientTimesOut() throws Exception {
    faults(Map.of("merchant_order", "mo-6", "reply_delay_ms", 700));
    assertThrows(HttpTimeoutException.class, () -> client.post("/charge",
        Map.of("merchant_order", "mo-6", "amount", 10, "notify_url", receiver.url()), Duration.ofMillis(200)));
    assertEquals("CHARGED", client.get("/charges/mo-6").body().path("status").asText());
    assertEquals(1, rows().size());
  }

  @Test
  void refundIsIdempotentByKeyEvenWhenFirstReplyIsLost() throws Exception {
    String txn = charge("mo-7", 2500).body().path("txn").asText();
    faults(Map.of("merchant_order", "mo-7", "first_refund_reply_delay_ms", 1500));
    assertThrows(HttpTimeoutException.class, () -> refund("mo-7", "rk-1", 2500, Duration.ofMillis(300)));

    long t0 = System.nanoTime();
    Resp again = refund("mo-7", "rk-1", 2500, Duration.ofSeconds(5));
    assertTrue((System.nanoTime() - t0) / 1_000_000 < 1000, "repeat is not delayed");
    assertEquals(200, again.status());
    assertEquals("REFUNDED", again.body().path("result").asText());
    String refundId = again.body().path("refund_id").asText();
    assertTrue(refundId.matches("rfd-\\d{6}"));
    assertEquals(again.body(), refund("mo-7", "rk-1", 2500, Duration.ofSeconds(5)).body());

    Resp otherKey = refund("mo-7", "rk-2", 2500, Duration.ofSeconds(5));
    assertEquals(422, otherKey.status());
    assertEquals("ALREADY_REFUNDED_OTHER_KEY", otherKey.body().path("error").asText());

    List<JsonNode> refunds = rows().stream().filter(r -> r.path("type").asText().equals("REFUND")).toList();
    assertEquals(1, refunds.size());
    assertEquals("rk-1", refunds.get(0).path("refund_key").asText());
    assertEquals(txn, refunds.get(0).path("txn").asText());
    assertEquals(2500, refunds.get(0).path("amount").asLong());
    assertEquals("REFUNDED", client.get("/charges/mo-7").body().path("status").asText());

    List<CallbackReceiver.Received> cbs = receiver.await("mo-7", 2, 5_000);
    Thread.sleep(300);
    Set<String> kinds = receiver.of("mo-7").stream().map(r -> r.json().path("kind").asText())
        .collect(Collectors.toSet());
    assertEquals(Set.of("CHARGED", "REFUNDED"), kinds);
    assertEquals(2, receiver.of("mo-7").size());
    assertEquals(4, client.get("/stats").body().path("refund_requests").asLong());
    assertEquals(2, cbs.size());
  }

  @Test
  void refundErrors() throws Exception {
    assertEquals("NOT_CHARGED", refund("nobody", "k", 1, Duration.ofSeconds(5)).body().path("error").asText());
    faults(Map.of("merchant_order", "mo-8d", "decline", true));
    charge("mo-8d", 100);
    assertEquals("NOT_CHARGED", refund("mo-8d", "k0", 100, Duration.ofSeconds(5)).body().path("error").asText());
    charge("mo-8", 100);
    Resp partial = refund("mo-8", "k1", 50, Duration.ofSeconds(5));
    assertEquals(422, partial.status());
    assertEquals("AMOUNT_MISMATCH", partial.body().path("error").asText());
    assertEquals(0, rows().stream().filter(r -> r.path("type").asText().equals("REFUND")).count());
  }

  @Test
  void callbackCopiesShareNotifyId() throws Exception {
    faults(Map.of("merchant_order", "mo-9", "callback_copies", 3));
    charge("mo-9", 100);
    List<CallbackReceiver.Received> cbs = receiver.await("mo-9", 3, 5_000);
    Thread.sleep(200);
    assertEquals(3, receiver.of("mo-9").size());
    assertEquals(1, cbs.stream().map(r -> r.json().path("notify_id").asText()).distinct().count());
    assertEquals(1, cbs.stream().map(CallbackReceiver.Received::rawBody).distinct().count());
    // at least once: a delivery whose 2xx came back late is retried and counted again
    assertTrue(client.get("/stats").body().path("callbacks_sent").asLong() >= 3);
  }

  @Test
  void callbackIsRetriedUntil2xx() throws Exception {
    receiver.failNext(2);
    charge("mo-10", 100);
    List<CallbackReceiver.Received> cbs = receiver.await("mo-10", 1, 5_000);
    assertEquals("CHARGED", cbs.get(0).json().path("kind").asText());
  }

  @Test
  void callbackDelay() throws Exception {
    faults(Map.of("merchant_order", "mo-11", "callback_delay_ms", 600));
    long t0 = System.nanoTime();
    charge("mo-11", 100);
    CallbackReceiver.Received cb = receiver.await("mo-11", 1, 5_000).get(0);
    assertTrue((cb.atNanos() - t0) / 1_000_000 >= 550, "callback delayed");
  }

  @ParameterizedTest(name = "{0}: {1} then {2}")
  @CsvSource({"reverse, REFUNDED, CHARGED", "fifo, CHARGED, REFUNDED"})
  void heldCallbacksAreReleasedInTheAskedOrder(String order, String first, String second) throws Exception {
    String mo = "mo-12-" + order;
    faults(Map.of("merchant_order", mo, "hold_callbacks", true));
    charge(mo, 100);
    assertEquals(200, refund(mo, "rk", 100, Duration.ofSeconds(5)).status());
    Thread.sleep(300);
    assertTrue(receiver.of(mo).isEmpty(), "held");

    Resp released = client.post("/_callbacks/release", Map.of("merchant_order", mo, "order", order));
    assertEquals(200, released.status());
    assertEquals(2, released.body().path("released").asInt());
    List<String> kinds = receiver.of(mo).stream().map(r -> r.json().path("kind").asText()).toList();
    assertEquals(List.of(first, second), kinds, "delivered before the release answer, in the asked order");
    assertEquals(0, client.post("/_callbacks/release", Map.of("merchant_order", mo, "order", "fifo"))
        .body().path("released").asInt(), "nothing left held");
  }

  @Test
  void unavailableQueriesLeaveTheChargeInTheLedger() throws Exception {
    faults(Map.of("merchant_order", "mo-13", "query_unavailable", true));
    assertEquals("CHARGED", charge("mo-13", 100).body().path("result").asText());
    Resp query = client.get("/charges/mo-13");
    assertEquals(503, query.status(), "a query of the order gets no answer");
    assertEquals("UNAVAILABLE", query.body().path("error").asText());
    assertEquals(200, client.get("/charges/mo-13-other").status(), "other orders are queried as usual");
    assertTrue(rows().stream().anyMatch(r -> r.path("merchant_order").asText().equals("mo-13")
        && r.path("type").asText().equals("CHARGE")), "the charge is in the statement");

    faults(Map.of("merchant_order", "mo-13", "query_unavailable", false));
    assertEquals("CHARGED", client.get("/charges/mo-13").body().path("status").asText());
  }

  @Test
  void signatureHeaderVerifies() throws Exception {
    charge("mo-14", 4200);
    CallbackReceiver.Received cb = receiver.await("mo-14", 1, 5_000).get(0);
    assertNotNull(cb.signature());
    Map<String, String> parts = new HashMap<>();
    for (String p : cb.signature().split(",")) {
      String[] kv = p.split("=", 2);
      parts.put(kv[0], kv[1]);
    }
    long t = Long.parseLong(parts.get("t"));
    assertTrue(Math.abs(System.currentTimeMillis() / 1000 - t) < 30);
    byte[] body = cb.rawBody().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertTrue(CallbackSignatures.valid(SECRET, cb.signature(), body, t), "the product's check accepts the stub's signature");
    assertFalse(CallbackSignatures.valid("wrong", cb.signature(), body, t));
  }

  @Test
  void noSignatureWithoutSecret() throws Exception {
    try (ChannelStub plain = ChannelStub.start(settings(null))) {
      new StubClient(plain.baseUrl(), MERCHANT_KEY).post("/charge",
          Map.of("merchant_order", "mo-15", "amount", 1, "notify_url", receiver.url()));
      assertEquals(null, receiver.await("mo-15", 1, 5_000).get(0).signature());
    }
  }

  @Test
  void sendHookDeliversArbitraryCallback() throws Exception {
    charge("mo-16", 100);
    receiver.await("mo-16", 1, 5_000);
    Resp r = client.post("/_callbacks/send",
        Map.of("merchant_order", "mo-16", "kind", "CHARGED", "amount", 100, "notify_id", "ntf-custom"));
    assertEquals(200, r.status());
    assertEquals("ntf-custom", r.body().path("notify_id").asText());
    List<CallbackReceiver.Received> cbs = receiver.of("mo-16");
    assertEquals(2, cbs.size());
    assertEquals("ntf-custom", cbs.get(1).json().path("notify_id").asText());
  }

  @Test
  void aRunningStubSignsNoArbitraryCallback() throws Exception {
    try (ChannelStub plain = ChannelStub.start(settings(SECRET))) {
      Resp r = new StubClient(plain.baseUrl(), MERCHANT_KEY).post("/_callbacks/send",
          Map.of("merchant_order", "mo-x", "kind", "CHARGED", "amount", 100, "notify_id", "ntf-forge"));
      assertEquals(404, r.status());
    }
  }

  /** Without the merchant key nobody can charge, query, close, refund or read the statement. */
  @Test
  void theMerchantApiNeedsTheMerchantKey() throws Exception {
    for (String key : new String[] {null, "wrong-key", SECRET}) {
      StubClient stranger = new StubClient(stub.baseUrl(), key);
      Resp charge = stranger.post("/charge", Map.of("merchant_order", "mo-20", "amount", 100, "notify_url", receiver.url()));
      assertEquals(401, charge.status(), "a charge with key " + key);
      assertEquals("UNAUTHORIZED", charge.body().path("error").asText());
      assertEquals(401, stranger.get("/charges/mo-20").status(), "a query with key " + key);
      assertEquals(401, stranger.post("/close", Map.of("merchant_order", "mo-20")).status());
      assertEquals(401, stranger.post("/refund", Map.of("merchant_order", "mo-20", "refund_key", "k", "amount", 100)).status());
      assertEquals(401, stranger.get("/statement").status());
    }
    assertEquals("NOT_FOUND", client.get("/charges/mo-20").body().path("status").asText(), "nothing was charged");
    assertEquals(0, client.get("/stats").body().path("charge_requests").asLong());
    assertEquals(200, new StubClient(stub.baseUrl(), null).get("/health").status(), "the health check stays open");
  }

  /** A charge naming a URL the merchant did not configure is refused: no signed notice goes there. */
  @Test
  void callbacksGoOnlyToTheConfiguredNotifyUrls() throws Exception {
    try (CallbackReceiver attacker = new CallbackReceiver()) {
      Resp r = client.post("/charge", Map.of("merchant_order", "mo-21", "amount", 100, "notify_url", attacker.url()));
      assertEquals(422, r.status());
      assertEquals("NOTIFY_URL_NOT_ALLOWED", r.body().path("error").asText());
      assertEquals("NOT_FOUND", client.get("/charges/mo-21").body().path("status").asText(), "no charge recorded");
      Resp send = client.post("/_callbacks/send", Map.of("merchant_order", "mo-21", "kind", "CHARGED", "amount", 100,
          "notify_url", attacker.url()));
      assertEquals(422, send.status(), "not even the test surface signs for another URL");
      Thread.sleep(500);
      assertEquals(0, attacker.of("mo-21").size(), "the other URL got nothing");
    }
  }

  /** The lab endpoints exist only on loopback unless asked for; a stub reachable from elsewhere has none. */
  @Test
  void theLabIsOnOnlyWhereAskedOrOnLoopback() throws Exception {
    try (ChannelStub anywhere = ChannelStub.start(settings(SECRET).on("0.0.0.0", 0));
        ChannelStub labOff = ChannelStub.start(settings(SECRET).withLab(false));
        ChannelStub labOn = ChannelStub.start(settings(SECRET).on("0.0.0.0", 0).withLab(true))) {
      for (ChannelStub closed : List.of(anywhere, labOff)) {
        StubClient c = new StubClient(closed.baseUrl(), MERCHANT_KEY);
        assertEquals(404, c.post("/_faults", Map.of("decline", true)).status());
        assertEquals(404, c.post("/_reset", Map.of()).status());
        assertEquals(404, c.post("/_callbacks/release", Map.of("merchant_order", "mo-22")).status());
        assertEquals(404, c.get("/stats").status());
        assertEquals(200, c.get("/charges/mo-22").status(), "the merchant API stays");
      }
      assertEquals(200, new StubClient(labOn.baseUrl(), null).get("/stats").status(), "explicitly enabled");
    }
    // the lab keeps the admin port's door: a page cannot post to it, a rebound name cannot read it
    java.net.http.HttpClient plain = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpResponse<String> noHeader = plain.send(java.net.http.HttpRequest.newBuilder(
        java.net.URI.create(stub.baseUrl() + "/_reset")).header("Content-Type", "text/plain")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(400, noHeader.statusCode(), "a form-like POST to the lab without X-Requested-By");
    assertTrue(noHeader.body().contains("REQUESTED_BY_REQUIRED"), noHeader.body());
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", stub.port())) {
      s.setSoTimeout(5_000);
      s.getOutputStream().write(("GET /stats HTTP/1.1\r\nHost: rebound.example:" + stub.port()
          + "\r\nX-Requested-By: page\r\nConnection: close\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      String answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      assertTrue(answer.startsWith("HTTP/1.1 403") && answer.contains("HOST_REFUSED"), answer);
    }
    assertThrows(IllegalArgumentException.class, () -> ChannelStub.Settings.local(null, SECRET, Set.of(receiver.url())));
    assertThrows(IllegalArgumentException.class, () -> ChannelStub.Settings.local(SECRET, SECRET, Set.of(receiver.url())),
        "the merchant key is not the callback secret");
    assertThrows(IllegalArgumentException.class, () -> ChannelStub.Settings.local(MERCHANT_KEY, SECRET, Set.of()));
  }

  @Test
  void statsCountRequests() throws Exception {
    charge("mo-17", 100);
    charge("mo-17", 100);
    charge("mo-17", 1);
    charge("mo-18", 100);
    client.post("/close", Map.of("merchant_order", "mo-19"));
    charge("mo-19", 100);
    refund("mo-18", "k", 100, Duration.ofSeconds(5));
    client.get("/charges/mo-17");
    receiver.await("mo-18", 2, 5_000);
    JsonNode s = client.get("/stats").body();
    assertEquals(5, s.path("charge_requests").asLong());
    assertEquals(3, s.path("charge_requests_by_order").path("mo-17").asLong());
    assertEquals(1, s.path("charge_requests_by_order").path("mo-18").asLong());
    assertEquals(1, s.path("charge_requests_by_order").path("mo-19").asLong());
    assertEquals(1, s.path("close_requests").asLong());
    assertEquals(1, s.path("refund_requests").asLong());
    assertEquals(1, s.path("query_requests").asLong());
    receiver.await("mo-17", 1, 5_000);
    // at least once: a delivery whose 2xx came back late is retried and counted again
    assertTrue(client.get("/stats").body().path("callbacks_sent").asLong() >= 3);

    client.post("/_reset", Map.of());
    JsonNode after = client.get("/stats").body();
    assertEquals(0, after.path("charge_requests").asLong());
    assertEquals(0, after.path("charge_requests_by_order").size());
    assertEquals("NOT_FOUND", client.get("/charges/mo-17").body().path("status").asText());
  }

  /** A request the stub refuses: method, path, raw body (null for a GET), the status and the error code if it names one. */
  static Stream<Arguments> badRequestsAndUnknownPaths() {
    return Stream.of(
        Arguments.of("POST", "/charge", "{not json", 400, "BAD_REQUEST"),
        Arguments.of("POST", "/charge", "{\"merchant_order\":\"x\",\"amount\":1}", 400, null),
        Arguments.of("POST", "/refund", "{\"merchant_order\":\"x\"}", 400, null),
        Arguments.of("POST", "/_faults", "{\"callback_copies\":\"many\"}", 400, null),
        Arguments.of("GET", "/nope", null, 404, "NOT_FOUND"),
        Arguments.of("GET", "/charge", null, 405, null));
  }

  @ParameterizedTest(name = "{0} {1} {2}: {3}")
  @MethodSource
  void badRequestsAndUnknownPaths(String method, String path, String body, int status, String error) throws Exception {
    Resp r = method.equals("GET") ? client.get(path) : client.post(path, body, Duration.ofSeconds(5));
    assertEquals(status, r.status());
    if (error != null) assertEquals(error, r.body().path("error").asText());
  }

  @Test
  void aMalformedOrIncompleteChargeSaysWhatIsWrong() throws Exception {
    assertTrue(client.post("/charge", "{not json", Duration.ofSeconds(5)).body().has("message"));
    Resp missing = client.post("/charge", Map.of("merchant_order", "x", "amount", 1));
    assertTrue(missing.body().path("message").asText().contains("notify_url"));
  }
}
