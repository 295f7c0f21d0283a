package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-01: the happy path over HTTP. 201 CREATED, and a retry with the key gets 200 REPLAY with that order; pay answers PAID
 * synchronously; the channel's two duplicate callbacks change nothing; a declined order fails
 * and its unit comes back (3 → 4).
 */
@Tag("fast") // in ./flashsale test --fast
class C2901HappyPathTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("C29-01", "happy path over HTTP");

  private static final String SKU = "sku-c2901";

  @Test
  void happyPathReplayDuplicatesAndDecline() throws Exception {
    stack.sku(SKU, 5, 3);
    HttpJson alice = stack.api.login("t1", "user-0042");
    HttpJson bob = stack.api.login("t1", "user-0043");

    HttpJson.Reply created = Buyers.create(alice, "c2901-a", SKU, 1);
    ev.equal(201, created.status(), "first create answers 201");
    ev.equal("CREATED", created.text("outcome"), "outcome CREATED");
    String orderId = created.text("order_id");
    ev.check(orderId != null && orderId.matches("ord-\\d{4,}"), "order id allocated: " + orderId);
    ev.equal(orderId + "/r1", created.body().path("reservation").path("key").asText(), "reservation key /r1");
    ev.equal("HELD", created.body().path("reservation").path("status").asText(), "reservation HELD");

    HttpJson.Reply replay = Buyers.create(alice, "c2901-a", SKU, 1);
    ev.equal(200, replay.status(), "same key + same payload answers 200");
    ev.equal("REPLAY", replay.text("outcome"), "outcome REPLAY");
    ev.equal("true", replay.header("Idempotent-Replayed"), "marked Idempotent-Replayed: true");
    ev.equal(Buyers.asReplay(created.raw()), replay.raw(), "with the first answer's order fields, byte for byte");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM orders WHERE subject = 'user-0042'"), "one order row for the key");

    Buyers.fault(stack.channel, orderId, Map.of("callback_copies", 2));
    HttpJson.Reply paid = Buyers.pay(alice, orderId);
    ev.equal(200, paid.status(), "pay answers 200");
    ev.equal("PAID", paid.text("status"), "the synchronous charge reply makes the order PAID");

    stack.awaitNoticesApplied(2, 15_000);
    Map<String, Integer> effects = stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE merchant_order = ?", orderId);
    ev.note("notification effects " + orderId + " " + effects);
    ev.equal(Map.of("DUPLICATE PAID", 2), effects, "both callbacks recorded as DUPLICATE PAID");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ? AND event_type = 'ORDER_PAID'", orderId),
        "exactly one ORDER_PAID event");
    ev.equal("CONFIRMED", stack.sql.text(
        "SELECT r.status FROM orders o JOIN reservation r ON r.reservation_key = o.reservation_key WHERE o.order_id = ?",
        orderId), "reservation CONFIRMED");
    String timelineA = stack.sql.timeline(orderId);
    ev.note("timeline " + orderId + ": " + timelineA);
    ev.equal("[-->CREATED v1 create] [CREATED->PAYING v2 pay] [PAYING->PAID v3 charge reply]", timelineA,
        "timeline of the paid order");

    HttpJson.Reply got = alice.get("/orders/" + orderId);
    ev.equal(200, got.status(), "GET answers 200");
    ev.equal(3, got.body().path("timeline").size(), "GET shows three transitions");
    ev.check(got.text("workflow_id").startsWith("order:t1:user-0042:"), "GET shows the workflow id");
    HttpJson.Reply late = Buyers.create(alice, "c2901-a", SKU, 1);
    ev.check(Buyers.isReplayOf(late, created),
        "a retry of the paid order's create: 200 REPLAY with what the create made (CREATED v1)");

    // a declined payment: FAILED and the unit back in the same transaction
    HttpJson.Reply b = Buyers.create(bob, "c2901-b", SKU, 1);
    String declined = b.text("order_id");
    ev.equal(3, stack.sql.remaining(SKU), "remaining 3 with one PAID and one CREATED");
    Buyers.fault(stack.channel, declined, Map.of("decline", true));
    HttpJson.Reply failed = Buyers.pay(bob, declined);
    ev.equal("FAILED", failed.text("status"), "declined charge answers FAILED");
    ev.equal(4, stack.sql.remaining(SKU), "the declined order's unit is back: remaining 4");
    ev.equal("RELEASED", stack.sql.text(
        "SELECT status FROM reservation WHERE reservation_key = ?", declined + "/r1"), "reservation RELEASED");
    ev.note("timeline " + declined + ": " + stack.sql.timeline(declined));

    stack.awaitNoticesApplied(3, 15_000);
    String summary = stack.checkReconcileClean(ev, "reconcile clean");

    stack.recordHistory(orderId, "c2901-paid");
    stack.recordHistory(declined, "c2901-declined");
  }
}
