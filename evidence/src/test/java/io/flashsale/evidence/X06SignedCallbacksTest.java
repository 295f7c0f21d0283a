package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.paymentchannel.CallbackSignatures;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * with a callback secret configured, the stub signs every callback and the API accepts
 * only valid, fresh signatures: a missing, forged, tampered or stale signature is 401 and
 * records nothing; the real signed callbacks still drive the order.
 */
class X06SignedCallbacksTest {
  private static final String SECRET = "x06-secret";
  @RegisterExtension static final Stack stack = new Stack().with("channel.callbackSecret", SECRET);
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

    ev.equal("PAID", Buyers.pay(buyer, id).text("status"), "a real payment goes through");
    stack.awaitNoticesApplied(1, 10_000);
    ev.equal("DUPLICATE PAID", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", id),
        "the stub's signed callback was accepted and applied");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static int post(String body, String signature) {
    return stack.callback(body, signature).status();
  }

}
