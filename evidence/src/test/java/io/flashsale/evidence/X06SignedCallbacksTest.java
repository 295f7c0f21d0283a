package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.paymentchannel.CallbackSignatures;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * with a callback secret configured, the stub signs every callback and the API accepts
 * only valid, fresh signatures: a missing, forged, tampered or stale signature is 401 and
 * records nothing; the real signed callbacks still drive the order. And the channel is no signing
 * oracle: without the merchant's key nobody can make it charge an order (and so send a correctly
 * signed CHARGED notice), and even with it a charge names no URL but the merchant's own.
 */
@Tag("engine-independent") // its claim is about the API's signature check and the channel's keys, the same on either engine
class X06SignedCallbacksTest {
  private static final String SECRET = "x06-secret";
  /** The channel's old secret while it is rotated out: still accepted. */
  private static final String PREVIOUS = "x06-previous-secret";
  @RegisterExtension static final Stack stack = new Stack().with("channel.callbackSecret", SECRET)
      .with("channel.previousCallbackSecret", PREVIOUS);
  @RegisterExtension static final Evidence ev = new Evidence("X-06", "forged and stale signed callbacks are rejected");

  @Test
  void onlyValidSignaturesCount() throws Exception {
    stack.sku("sku-x06", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-x06");
    String id = Buyers.create(buyer, "x06", "sku-x06", 1).text("order_id");
    String body = "{\"notify_id\":\"ntf-x06\",\"merchant_order\":\"" + id
        + "\",\"kind\":\"CHARGED\",\"amount\":1990,\"txn\":\"txn-x06\"}";
    long now = System.currentTimeMillis() / 1000;
    byte[] raw = body.getBytes(StandardCharsets.UTF_8);

    ev.equal(401, post(body, null), "no signature → 401");
    ev.equal(401, post(body, CallbackSignatures.header("another-secret", now, raw)), "signed with another secret → 401");
    ev.equal(401, post(body.replace("1990", "1"), CallbackSignatures.header(SECRET, now, raw)), "body changed after signing → 401");
    ev.equal(401, post(body, CallbackSignatures.header(SECRET, now - 3600, raw)), "signature an hour old → 401");
    ev.equal(401, post(body, "t=" + now + ",v1=" + "0".repeat(64)), "forged digest → 401");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM payment_notification"), "rejected callbacks record nothing");
    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "the order did not move");

    // rotation: a callback signed with the secret being retired still counts, one of a third does not
    String unknown = "{\"notify_id\":\"ntf-x06-rot\",\"merchant_order\":\"ord-x06-none\",\"kind\":\"CHARGED\","
        + "\"amount\":1990,\"txn\":\"txn-x06-rot\"}";
    byte[] unknownRaw = unknown.getBytes(StandardCharsets.UTF_8);
    ev.equal(200, post(unknown, CallbackSignatures.header(PREVIOUS, now, unknownRaw)),
        "signed with channel.previousCallbackSecret (rotation) → 200");
    ev.equal(401, post(unknown, CallbackSignatures.header("x06-third-secret", now, unknownRaw)), "signed with a third → 401");

    ev.equal("PAID", Buyers.pay(buyer, id).text("status"), "a real payment goes through");
    // this order's callback, not only the rotation notice above: every recorded one applied can be seen
    // before the stub's callback arrives
    stack.awaitTrue(() -> stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", id) != null,
        15_000, "the stub's callback of " + id + " never applied");
    ev.equal("DUPLICATE PAID", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", id),
        "the stub's signed callback was accepted and applied");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  @Test
  void theChannelSignsNothingForStrangers() throws Exception {
    stack.sku("sku-x06-oracle", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-x06-oracle");
    String id = Buyers.create(buyer, "x06-oracle", "sku-x06-oracle", 1).text("order_id");
    String notifyUrl = "http://127.0.0.1:" + stack.wiring.apiPort() + "/callbacks/payment";
    Map<String, Object> charge = Map.of("merchant_order", id, "amount", 1990, "notify_url", notifyUrl);
    for (String key : new String[] {null, "a-guessed-key", SECRET}) {
      HttpJson.Reply r = new HttpJson(stack.wiring.channelUrl(), key).post("/charge", charge);
      ev.equal(401, r.status(), "POST /charge of " + id + " with " + (key == null ? "no key" : "the key '" + key + "'")
          + " → 401");
      ev.equal("UNAUTHORIZED", r.text("error"), "its error code");
    }
    ev.equal(401, new HttpJson(stack.wiring.channelUrl(), null).get("/charges/" + id).status(), "a query without the key → 401");
    ev.equal(401, new HttpJson(stack.wiring.channelUrl(), null).get("/statement").status(), "the statement without the key → 401");

    try (CallbackSink attacker = new CallbackSink()) {
      HttpJson.Reply elsewhere = stack.channel.post("/charge",
          Map.of("merchant_order", id, "amount", 1990, "notify_url", attacker.url()));
      ev.equal(422, elsewhere.status(), "with the merchant's key, a charge naming another notify URL → 422");
      ev.equal("NOTIFY_URL_NOT_ALLOWED", elsewhere.text("error"), "its error code");
      Thread.sleep(1_000);
      ev.equal(0, attacker.received(), "no signed body went to the other URL");
    }
    ev.equal("NOT_FOUND", stack.channel.get("/charges/" + id).text("status"), "the channel charged nothing");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM payment_notification WHERE merchant_order = ?", id),
        "no notice reached the service");
    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "the order did not move");
    ev.equal("CANCELLED", Buyers.cancel(buyer, id).text("outcome"), "its buyer can still cancel it");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  /** A URL that counts what is posted to it: the attacker's. */
  private static final class CallbackSink implements AutoCloseable {
    private final com.sun.net.httpserver.HttpServer server;
    private final java.util.concurrent.atomic.AtomicInteger received = new java.util.concurrent.atomic.AtomicInteger();

    CallbackSink() throws java.io.IOException {
      server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 8);
      server.createContext("/", ex -> {
        try (ex) {
          received.incrementAndGet();
          ex.sendResponseHeaders(200, -1);
        }
      });
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/steal";
    }

    int received() {
      return received.get();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  private static int post(String body, String signature) {
    return stack.callback(body, signature).status();
  }

}
