package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-02: the rejection paths. 8 concurrent pays on one order give one PAID, seven REJECTED and
 * one charge request at the channel; the rejection matrix; a success notice with the wrong
 * amount changes nothing; sold-out, over-the-limit and reused-key creates leave no order row, and
 * a refused create is no answer to keep: its retry with the same key and body is a new attempt;
 * identity comes only from the token.
 */
class C2902RejectionsTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("C29-02", "rejections, exactly one charge, no row when sold out");

  @Test
  void eightConcurrentPaysChargeOnce() throws Exception {
    stack.sku("sku-c2902-pay", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-0100");
    String orderId = Buyers.create(buyer, "c2902-pay", "sku-c2902-pay", 1).text("order_id");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Buyers.Settled>> replies = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      // each pay its own Idempotency-Key: a 503 (no answer in time) is sent again with it, and gets
      // the answer of the pay the engine took, if it took it
      String key = "c2902-pay-" + i;
      replies.add(pool.submit(() -> {
        go.await();
        return Buyers.retrying503(() -> Buyers.pay(buyer, orderId, key));
      }));
    }
    go.countDown();
    Map<String, Integer> outcomes = new TreeMap<>();
    Map<String, Integer> seen = new TreeMap<>(); // with the status each refusal saw (PAYING or PAID)
    List<Buyers.Settled> answers = new ArrayList<>();
    for (Future<Buyers.Settled> f : replies) {
      Buyers.Settled r = f.get();
      answers.add(r);
      String key = r.status() == 200 ? "200 " + r.text("status") : r.status() + " " + r.text("outcome");
      outcomes.merge(key, 1, Integer::sum);
      seen.merge(key + (r.status() == 200 ? "" : " " + r.text("status")), 1, Integer::sum);
    }
    pool.shutdown();
    ev.note("8 concurrent pays " + orderId + " " + seen + "; " + Buyers.retriesNote(answers));
    ev.equal(Map.of("200 PAID", 1, "409 REJECTED", 7), outcomes,
        "exactly one pay reaches PAID, the other seven are 409 REJECTED");
    ev.equal(1, Buyers.chargeRequests(stack.channel, orderId), "the channel received exactly one charge request");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM order_transition WHERE order_id = ? AND to_status = 'PAID'", orderId),
        "one transition to PAID");
  }

  @Test
  void rejectionMatrix() {
    stack.sku("sku-c2902-matrix", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-0101");
    String paid = Buyers.create(buyer, "c2902-m1", "sku-c2902-matrix", 1).text("order_id");
    ev.equal("PAID", Buyers.pay(buyer, paid).text("status"), "matrix order paid");
    HttpJson.Reply payPaid = Buyers.pay(buyer, paid);
    ev.check(payPaid.status() == 409 && "REJECTED".equals(payPaid.text("outcome")) && "PAID".equals(payPaid.text("status")),
        "pay on PAID → 409 REJECTED PAID");
    HttpJson.Reply cancelPaid = Buyers.cancel(buyer, paid);
    ev.check(cancelPaid.status() == 409 && "PAID".equals(cancelPaid.text("status")), "cancel on PAID → 409 REJECTED PAID");

    String cancelled = Buyers.create(buyer, "c2902-m2", "sku-c2902-matrix", 1).text("order_id");
    int before = stack.sql.remaining("sku-c2902-matrix");
    HttpJson.Reply c1 = Buyers.cancel(buyer, cancelled);
    ev.check(c1.status() == 200 && "CANCELLED".equals(c1.text("outcome")), "cancel on CREATED → 200 CANCELLED");
    ev.equal(before + 1, stack.sql.remaining("sku-c2902-matrix"), "cancel returned the unit");
    HttpJson.Reply c2 = Buyers.cancel(buyer, cancelled);
    ev.check(c2.status() == 200 && "REPLAY_CANCEL".equals(c2.text("outcome")), "cancel again → 200 REPLAY_CANCEL");
    ev.equal(before + 1, stack.sql.remaining("sku-c2902-matrix"), "the second cancel released nothing");
    HttpJson.Reply payCancelled = Buyers.pay(buyer, cancelled);
    ev.check(payCancelled.status() == 409 && "CANCELLED".equals(payCancelled.text("status")),
        "pay on CANCELLED → 409 REJECTED CANCELLED");
    ev.equal(0, Buyers.chargeRequests(stack.channel, cancelled), "no charge request for the cancelled order");
    ev.note("matrix: pay PAID=" + payPaid.status() + " cancel PAID=" + cancelPaid.status() + " cancel=" + c1.status()
        + " cancel again=" + c2.text("outcome") + " pay CANCELLED=" + payCancelled.status());
  }

  @Test
  void amountMismatchChangesNothing() throws Exception {
    stack.sku("sku-c2902-amount", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-0102");
    String orderId = Buyers.create(buyer, "c2902-amount", "sku-c2902-amount", 1).text("order_id");
    HttpJson.Reply cb = stack.callback(Map.of("notify_id", "ntf-forged-1",
        "merchant_order", orderId, "kind", "CHARGED", "amount", 1, "txn", "txn-x"));
    ev.equal(200, cb.status(), "the callback is accepted (recorded)");
    stack.awaitNoticesApplied(1, 10_000);
    ev.equal("AMOUNT_MISMATCH", stack.sql.text("SELECT effect FROM payment_notification WHERE notify_id = 'ntf-forged-1'"),
        "effect AMOUNT_MISMATCH");
    HttpJson.Reply o = buyer.get("/orders/" + orderId);
    ev.check("CREATED".equals(o.text("status")) && o.body().path("version").asInt() == 1, "order still CREATED v1");
    ev.equal("HELD", o.body().path("reservation").path("status").asText(), "reservation still HELD");
    HttpJson.Reply bad = stack.callback("{\"notify_id\":\"n\",\"kind\":\"CHARGED\"}");
    ev.check(bad.status() == 400 && bad.text("code") != null, "malformed callback → 400 with a code: " + bad.raw());
    HttpJson.Reply unsigned = stack.api.post("/callbacks/payment", Map.of("notify_id", "ntf-unsigned",
        "merchant_order", orderId, "kind", "CHARGED", "amount", 1990, "txn", "txn-x"));
    ev.check(unsigned.status() == 401 && "BAD_SIGNATURE".equals(unsigned.text("code")),
        "an unsigned callback is refused in the local default too (its key is made at start)");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM payment_notification WHERE notify_id = 'ntf-unsigned'"),
        "the unsigned callback recorded nothing");
  }

  @Test
  void failedCreatesLeaveNoRow() throws Exception {
    stack.sku("sku-c2902-one", 1, 3);
    HttpJson first = stack.api.login("t1", "user-0103");
    HttpJson late = stack.api.login("t1", "user-0104");
    ev.equal(201, Buyers.create(first, "c2902-one", "sku-c2902-one", 1).status(), "the only unit is taken");
    HttpJson.Reply soldOut = Buyers.create(late, "c2902-late", "sku-c2902-one", 1);
    ev.check(soldOut.status() == 409 && "SOLD_OUT".equals(soldOut.text("outcome")), "sold out → 409 SOLD_OUT (gate)");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders WHERE subject = 'user-0104'"), "sold-out leaves no order row");

    stack.sku("sku-c2902-two", 2, 3);
    HttpJson greedy = stack.api.login("t1", "user-0105");
    HttpJson.Reply tooMany = Buyers.create(greedy, "c2902-three", "sku-c2902-two", 3);
    ev.check(tooMany.status() == 409 && "SOLD_OUT".equals(tooMany.text("outcome")),
        "3 of 2 remaining → 409 SOLD_OUT through the workflow");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders WHERE subject = 'user-0105'"), "and no order row");
    ev.equal(2, stack.sql.remaining("sku-c2902-two"), "and no unit taken");
    HttpJson.Reply sameAgain = Buyers.create(greedy, "c2902-three", "sku-c2902-two", 3);
    ev.check(sameAgain.status() == 409 && "SOLD_OUT".equals(sameAgain.text("outcome")), "its retry → 409 SOLD_OUT again");
    HttpJson.Reply retried = Buyers.create(greedy, "c2902-three", "sku-c2902-two", 2);
    ev.equal(201, retried.status(), "the same key may be used again after SOLD_OUT");
    HttpJson.Reply reusedNow = Buyers.create(greedy, "c2902-three", "sku-c2902-two", 3);
    ev.check(reusedNow.status() == 422 && "KEY_REUSED".equals(reusedNow.text("outcome")),
        "then the key is that order's: the refused body → 422 KEY_REUSED");

    // a refused create stored nothing, so its retry (same key, same body) is a new attempt on both
    // engines, not the refusal remembered from the closed workflow run
    stack.sku("sku-c2902-grow", 1, 3);
    HttpJson grower = stack.api.login("t1", "user-0109");
    HttpJson.Reply short1 = Buyers.create(grower, "c2902-grow", "sku-c2902-grow", 2);
    ev.check(short1.status() == 409 && "SOLD_OUT".equals(short1.text("outcome")), "2 of 1 remaining → 409 SOLD_OUT");
    String refusedRun = "order:t1:user-0109:c2902-grow";
    stack.awaitTrue(() -> !"RUNNING".equals(stack.workflowStatus(refusedRun)), 30_000, "the refused run did not close");
    stack.sku("sku-c2902-grow", 2, 3);
    HttpJson.Reply grown = Buyers.create(grower, "c2902-grow", "sku-c2902-grow", 2);
    ev.check(grown.status() == 201 && "CREATED".equals(grown.text("outcome")),
        "after the total went to 2, the same key and body → 201 CREATED (" + grown.status() + ")");

    stack.sku("sku-c2902-limit", 10, 3);
    HttpJson capped = stack.api.login("t1", "user-0106");
    ev.equal(201, Buyers.create(capped, "c2902-l1", "sku-c2902-limit", 3).status(), "3 units within the limit");
    HttpJson.Reply over = Buyers.create(capped, "c2902-l2", "sku-c2902-limit", 1);
    ev.check(over.status() == 409 && "USER_LIMIT".equals(over.text("outcome")), "a 4th unit → 409 USER_LIMIT");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM orders WHERE subject = 'user-0106'"), "USER_LIMIT leaves no row");

    HttpJson.Reply reused = Buyers.create(capped, "c2902-l1", "sku-c2902-limit", 2);
    ev.check(reused.status() == 422 && "KEY_REUSED".equals(reused.text("outcome")), "same key, other payload → 422 KEY_REUSED");
  }

  @Test
  void identityOnlyFromTheToken() {
    stack.sku("sku-c2902-auth", 5, 3);
    HttpJson owner = stack.api.login("t1", "user-0107");
    HttpJson other = stack.api.login("t1", "user-0108");
    HttpJson otherTenant = stack.api.login("t2", "user-0107");
    String orderId = Buyers.create(owner, "c2902-auth", "sku-c2902-auth", 1).text("order_id");
    ev.equal(401, stack.api.get("/orders/" + orderId).status(), "no token → 401");
    String token = owner.token();
    // change a character well inside the signature: every one of its bits counts (the last
    // base64 character carries padding bits a decoder may ignore)
    int at = token.length() - 10;
    String tampered = token.substring(0, at) + (token.charAt(at) == 'A' ? 'B' : 'A') + token.substring(at + 1);
    HttpJson.Reply forged = stack.api.as(tampered).get("/orders/" + orderId);
    ev.check(Problems.is(forged, 401, "UNAUTHENTICATED"), "tampered token → " + Problems.shown(forged, 401, "UNAUTHENTICATED"));
    // no existence oracle: another's order answers exactly as one that does not exist
    String missing = other.get("/orders/ord-99999999").raw();
    ev.equal(404, other.get("/orders/" + orderId).status(), "another subject's order → 404");
    ev.equal(missing, other.get("/orders/" + orderId).raw(), "its body is a missing order's");
    ev.equal(404, otherTenant.get("/orders/" + orderId).status(), "same subject in another tenant → 404");
    ev.equal(404, Buyers.pay(other, orderId).status(), "another subject cannot pay it (404)");
    ev.equal(404, Buyers.cancel(other, orderId).status(), "another subject cannot cancel it (404)");
    for (String field : List.of("tenant", "subject", "user")) {
      Map<String, Object> body = new java.util.LinkedHashMap<>(Buyers.order("c2902-x-" + field, "sku-c2902-auth", 1));
      body.put(field, "someone-else");
      HttpJson.Reply r = owner.post("/orders", body);
      ev.check(r.status() == 400 && "IDENTITY_IN_BODY".equals(r.text("code")), "body naming " + field + " → 400");
    }
    HttpJson.Reply invalid = owner.post("/orders", Buyers.order("c2902-q", "sku-c2902-auth", 4));
    ev.check(invalid.status() == 400 && "INVALID_FIELD".equals(invalid.text("code")), "quantity 4 → 400 INVALID_FIELD");
    ev.check(!invalid.raw().contains("Exception") && !invalid.raw().contains("\tat "), "no stack trace on the wire");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders WHERE request_key LIKE 'c2902-x-%' OR request_key = 'c2902-q'"),
        "rejected bodies leave no row");
    HttpJson.Reply list = owner.get("/orders?limit=10");
    ev.check(list.status() == 200 && list.body().path("orders").size() == 1, "list shows only own orders");
    ev.equal(400, owner.get("/orders?limit=1000").status(), "limit over 100 → 400");
  }
}
