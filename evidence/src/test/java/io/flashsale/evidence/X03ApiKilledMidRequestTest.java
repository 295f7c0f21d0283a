package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the API process (its own JVM: no worker, the workflows and activities run in the test's
 * JVM) is SIGKILLed while it holds two requests: a pay whose charge is in flight, and a create
 * whose reservation waits on the SKU row. The client's connections drop without an answer. The
 * client retries the same request key and Idempotency-Key against a restarted API and gets the
 * original answers: the create's order as 200 REPLAY (one order, one reservation), the pay's 200 PAID (one charge
 * at the channel, one confirmed unit, one event); a pay without the key is refused instead.
 */
class X03ApiKilledMidRequestTest {
  @RegisterExtension static final Stack stack = new Stack().with("channel.timeout", "8s");
  @RegisterExtension static final Evidence ev = new Evidence("X-03", "API SIGKILL mid-request: the retried key gets the original answer, nothing twice");

  private static final String SKU_A = "sku-x03-a";
  private static final String SKU_B = "sku-x03-b";
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** An API-only service on the test's database, engine and channel: killing it kills no worker. */
  private static Map<String, String> apiProperties(int api, int admin, String tokenSecret) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("dw.embedded", "false");
    p.put("dw.worker", "false");
    p.put("dw.database.url", stack.wiring.jdbcUrl());
    p.put("dw.database.password", Stack.CHILD_DB_PASSWORD);
    p.put("dw.temporal.engine", "external");
    p.put("dw.temporal.target", "127.0.0.1:" + stack.temporalPort);
    p.put("dw.temporal.createDeadline", Stack.CREATE_DEADLINE);
    p.put("dw.channel.baseUrl", stack.wiring.channelUrl());
    p.put("dw.channel.notifyUrl", "http://127.0.0.1:" + stack.wiring.apiPort() + "/callbacks/payment");
    p.put("dw.channel.callbackSecret", stack.wiring.callbackSecret());
    p.put("dw.channel.merchantKey", stack.wiring.merchantKey());
    p.put("dw.channel.plainHttpOutsideLocalDefault", "true");
    p.put("dw.auth.adminToken", Stack.CHILD_ADMIN_TOKEN);
    p.put("dw.auth.secret", tokenSecret);
    p.put("dw.auth.devLogin", "true");
    p.put("dw.auth.devLoginOutsideLocalDefault", "true"); // a test instance: its tokens come from dev login
    p.put("dw.consumer.enabled", "false");
    p.put("dw.relay.enabled", "false");
    p.put("dw.server.applicationConnectors[0].port", String.valueOf(api));
    p.put("dw.server.adminConnectors[0].port", String.valueOf(admin));
    p.put("dw.logging.level", "INFO");
    return p;
  }

  private static HttpResponse<String> post(int port, String token, String path, String body, String idempotencyKey)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + token)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (idempotencyKey != null) b.header("Idempotency-Key", idempotencyKey);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static CompletableFuture<HttpResponse<String>> postAsync(int port, String token, String path, String body,
      String key) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return post(port, token, path, body, key);
      } catch (Exception e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    });
  }

  /** What the client saw of a request whose server died: the exception, never an answer. */
  private static String dropped(CompletableFuture<HttpResponse<String>> f) throws Exception {
    try {
      HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
      return "an answer " + r.statusCode() + " " + r.body();
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = e.getCause() instanceof java.util.concurrent.CompletionException ce ? ce.getCause() : e.getCause();
      return "no answer: " + c.getClass().getSimpleName();
    }
  }

  @Test
  void apiKilledMidRequest() throws Exception {
    stack.sku(SKU_A, 5, 3);
    stack.sku(SKU_B, 5, 3);
    int api = Stack.freePortForChild();
    int admin = Stack.freePortForChild();
    byte[] key = new byte[32];
    new java.security.SecureRandom().nextBytes(key);
    Map<String, String> props = apiProperties(api, admin, java.util.HexFormat.of().formatHex(key));
    String token;
    String a;
    String createB = HttpJson.JSON.writeValueAsString(Buyers.order("x03-b", SKU_B, 1));
    try (ChildJvm first = ChildJvm.start("x03-api-1", props, "server", "embedded.yml")) {
      first.awaitLog("=== flashsale is up ===", 120_000);
      token = new HttpJson("http://127.0.0.1:" + api, null).login("t1", "user-x03").token();
      HttpResponse<String> createdA = post(api, token, "/orders",
          HttpJson.JSON.writeValueAsString(Buyers.order("x03-a", SKU_A, 1)), null);
      ev.equal(201, createdA.statusCode(), "order A created through the API process");
      a = HttpJson.JSON.readTree(createdA.body()).path("order_id").asText();

      // A's pay: the channel takes 3 s to answer, so the API holds the request while the charge is in flight
      Buyers.fault(stack.channel, a, Map.of("reply_delay_ms", 3_000, "hold_callbacks", true));
      CompletableFuture<HttpResponse<String>> payA = postAsync(api, token, "/orders/" + a + "/pay", "", "x03-pay-a");
      stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, a) == 1, 30_000, "A's charge never reached the channel");

      // B's create: its reservation waits on the SKU row this session holds
      try (Connection lock = stack.db().dataSource().getConnection()) {
        lock.setAutoCommit(false);
        lock.createStatement().execute("SELECT 1 FROM sku WHERE tenant = 't1' AND sku = '" + SKU_B + "' FOR UPDATE");
        CompletableFuture<HttpResponse<String>> createdB = postAsync(api, token, "/orders", createB, null);
        stack.awaitBlockedOnLock("UPDATE sku", 30_000);
        ev.note("STAGE A's charge in flight at the channel, B's reservation waiting on the SKU row; API pid "
            + first.pid() + " killed");
        ev.equal(137, first.killHard(), "the API process is SIGKILLed (137)");
        String sawA = dropped(payA);
        String sawB = dropped(createdB);
        ev.note("the client's pay of A: " + sawA + "; its create of B: " + sawB);
        ev.check(sawA.startsWith("no answer") && sawB.startsWith("no answer"), "both requests were cut without an answer");
        lock.rollback();
      }
    }
    // the workflows live on: A's charge reply makes it PAID, B's reservation goes through
    stack.awaitStatus(a, "PAID", 60_000);
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE request_key = 'x03-b'") == 1, 60_000,
        "B's order was never stored");
    ev.note("while the API was down: A " + stack.sql.timeline(a) + "; B stored");

    try (ChildJvm second = ChildJvm.start("x03-api-2", props, "server", "embedded.yml")) {
      second.awaitLog("=== flashsale is up ===", 120_000);
      // the same client, the same token (the restarted API shares the token key), the same keys
      HttpResponse<String> retryB = post(api, token, "/orders", createB, null);
      ev.note("create B retried: " + retryB.statusCode() + " " + retryB.body());
      var bodyB = HttpJson.JSON.readTree(retryB.body());
      ev.check(retryB.statusCode() == 200 && "REPLAY".equals(bodyB.path("outcome").asText())
              && "true".equals(retryB.headers().firstValue("Idempotent-Replayed").orElse(null)),
          "the retried create gets the order the cut call made: 200 REPLAY, Idempotent-Replayed: true");
      String b = bodyB.path("order_id").asText();
      ev.equal(stack.sql.text("SELECT order_id FROM orders WHERE request_key = 'x03-b'"), b, "it names the one order of the key");
      ev.check("CREATED".equals(bodyB.path("status").asText()) && bodyB.path("version").asInt() == 1,
          "as its create made it: CREATED v1");
      HttpResponse<String> againB = post(api, token, "/orders", createB, null);
      ev.check(againB.statusCode() == 200 && againB.body().equals(retryB.body()), "a second retry: the same answer, byte for byte");
      ev.equal(1L, stack.sql.count("SELECT count(*) FROM orders WHERE request_key = 'x03-b'"), "one order for the key");
      ev.equal(1L, stack.sql.count("SELECT count(*) FROM reservation WHERE reservation_key LIKE ?", b + "/%"),
          "one reservation for it");
      ev.equal(4, stack.sql.remaining(SKU_B), "one unit of B's SKU taken");

      HttpResponse<String> retryA = post(api, token, "/orders/" + a + "/pay", "", "x03-pay-a");
      ev.note("pay A retried with its Idempotency-Key: " + retryA.statusCode() + " " + retryA.body());
      var bodyA = HttpJson.JSON.readTree(retryA.body());
      ev.check(retryA.statusCode() == 200 && "PAID".equals(bodyA.path("status").asText()) && (bodyA.path("outcome").isNull() || bodyA.path("outcome").isMissingNode()),
          "the retried pay gets the original answer: 200 PAID");
      HttpResponse<String> againA = post(api, token, "/orders/" + a + "/pay", "", "x03-pay-a");
      ev.check(againA.statusCode() == 200 && againA.body().equals(retryA.body()), "a second retry: the same answer");
      HttpResponse<String> withoutKey = post(api, token, "/orders/" + a + "/pay", "", null);
      ev.note("a pay of A without the key: " + withoutKey.statusCode() + " " + withoutKey.body());
      ev.equal(409, withoutKey.statusCode(), "without the key it is a new pay, refused (409): the key brought the answer");
      ev.equal(1, Buyers.chargeRequests(stack.channel, a), "one charge request for A");
      ev.equal("CHARGED", stack.channel.get("/charges/" + a).text("status"), "the channel charged A once");
      ev.equal(1L, stack.sql.count("SELECT count(*) FROM reservation WHERE reservation_key LIKE ? AND status = 'CONFIRMED'",
          a + "/%"), "one confirmed reservation for A");
      ev.equal(4, stack.sql.remaining(SKU_A), "one unit of A's SKU taken");
      ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", a), "one ORDER_PAID event");
      stack.channel.post("/_callbacks/release", Map.of("merchant_order", a, "order", "fifo"));
      stack.awaitNoticesApplied(1, 30_000);
      ev.equal("DUPLICATE PAID", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", a),
          "A's callback is a duplicate");
      stack.awaitNothingPending(15_000);
      stack.checkReconcileClean(ev, "reconcile clean");
    }
  }
}
