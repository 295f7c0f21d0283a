package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-07: orders A and B both expire while UNKNOWN; a third buyer takes one of the two released
 * units. A's success notice re-reserves with /r2 and is PAID; B's finds no unit and is refunded
 * with rf-&lt;order&gt;. B's first refund reply is delayed past the timeout, the retry reuses the key
 * and the ledger shows one refund. Later notices change nothing, also after B's workflow
 * completed (signal-with-start gives a new run that applies the same rules from the database).
 */
// skips the clock past long timers (60 s and more): time skipping exists only in the in-memory engine
@org.junit.jupiter.api.Tag("in-memory-only")
@Tag("fast") // in ./flashsale test --fast
class C2907ReReserveOrRefundTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "5m");
  @RegisterExtension static final Evidence ev = new Evidence("C29-07", "re-reserve /r2 or refund, one refund in the ledger");

  private static final String SKU = "sku-c2907";

  @Test
  void reReserveOrRefund() throws Exception {
    stack.sku(SKU, 2, 3);
    HttpJson alice = stack.api.login("t1", "user-0701");
    HttpJson bob = stack.api.login("t1", "user-0702");
    HttpJson carol = stack.api.login("t1", "user-0703");
    String a = Buyers.create(alice, "c2907-a", SKU, 1).text("order_id");
    String b = Buyers.create(bob, "c2907-b", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, a, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    Buyers.fault(stack.channel, b, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true,
        "first_refund_reply_delay_ms", Stack.LATE_REPLY_MS));
    ev.equal("UNKNOWN", Buyers.pay(alice, a).text("status"), "A UNKNOWN");
    ev.equal("UNKNOWN", Buyers.pay(bob, b).text("status"), "B UNKNOWN");

    stack.skip(Duration.ofSeconds(61));
    stack.awaitTrue(() -> stack.sql.remaining(SKU) == 2, 10_000, "expired reservations not released");
    ev.note("after expiry: A " + status(a) + ", B " + status(b) + ", remaining " + stack.sql.remaining(SKU));
    ev.check(status(a).equals("UNKNOWN") && status(b).equals("UNKNOWN"), "both still UNKNOWN, units released");
    String c = Buyers.create(carol, "c2907-c", SKU, 1).text("order_id");
    ev.equal("PAID", Buyers.pay(carol, c).text("status"), "a third buyer takes one unit");
    ev.equal(1, stack.sql.remaining(SKU), "one unit left");

    stack.channel.post("/_callbacks/release", Map.of("merchant_order", a, "order", "fifo"));
    stack.awaitStatus(a, "PAID", 10_000);
    String ta = stack.sql.timeline(a);
    ev.note("timeline " + a + ": " + ta);
    ev.check(ta.matches(".*\\[UNKNOWN->PAID v4 callback ntf-\\d+ re-reserved " + a + "/r2\\]$"), "A re-reserved /r2 and PAID");
    ev.equal("PAID_REHELD", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", a),
        "A's notice effect PAID_REHELD");
    ev.equal(a + "/r2", stack.sql.text("SELECT reservation_key FROM orders WHERE order_id = ?", a), "A points at /r2");
    ev.equal("CONFIRMED", stack.sql.text("SELECT status FROM reservation WHERE reservation_key = ?", a + "/r2"),
        "/r2 CONFIRMED");

    stack.channel.post("/_callbacks/release", Map.of("merchant_order", b, "order", "fifo"));
    stack.awaitStatus(b, "REFUNDED", 20_000);
    String tb = stack.sql.timeline(b);
    ev.note("timeline " + b + ": " + tb);
    ev.check(tb.matches(".*\\[UNKNOWN->REFUNDING v4 callback ntf-\\d+ stock lost \\(SOLD_OUT\\)\\] \\[REFUNDING->REFUNDED v5 refund reply\\]$"),
        "B: stock lost → REFUNDING → REFUNDED");
    int refundRequests = stack.channel.get("/stats").body().path("refund_requests").asInt();
    ev.note("refund requests at the channel " + refundRequests + " (the first reply was delayed past the timeout)");
    ev.check(refundRequests >= 2, "the refund was retried after the lost reply");
    ev.equal(1L, stack.refundRows(b), "one refund row for B in the ledger");
    ev.equal("rf-" + b, refundKey(b), "refund key rf-<order_id>");
    stack.recordHistory(b, "c2907-refund-retried"); // the first run: the refund's first reply lost, retried

    // late notices: B's held REFUNDED notice, then (after B's workflow completed) a late notice of the
    // charge B was refunded for and a constructed late REFUNDED notice
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", b, "order", "fifo"));
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM payment_notification WHERE merchant_order = ?"
        + " AND kind = 'REFUNDED' AND effect IS NOT NULL", b) == 1, 10_000, "REFUNDED notice not applied");
    ev.equal("IGNORED REFUNDED", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?"
        + " AND kind = 'REFUNDED'", b), "REFUNDED notice → IGNORED REFUNDED");
    String wf = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", b);
    stack.skip(Duration.ofSeconds(601));
    stack.awaitTrue(() -> stack.workflowStatus(wf).equals("COMPLETED"), 10_000, "B's workflow did not complete");
    ev.note("B's workflow after the late-notice window: " + stack.workflowStatus(wf));
    String txn = stack.channel.get("/charges/" + b).text("txn");
    HttpJson.Reply late = stack.callback(Map.of("notify_id", "ntf-late-c2907",
        "merchant_order", b, "kind", "CHARGED", "amount", 1990, "txn", txn));
    // the charge B was settled with: the row answers it, as the workflow would, without a run
    ev.check(late.status() == 200 && "DUPLICATE REFUNDED".equals(late.text("effect")),
        "late CHARGED of B's charge answered DUPLICATE REFUNDED at arrival (" + late.raw() + ")");
    ev.equal("COMPLETED", stack.workflowStatus(wf), "no run started for it");
    HttpJson.Reply lateRefund = stack.callback(Map.of("notify_id", "ntf-late-refund-c2907",
        "merchant_order", b, "kind", "REFUNDED", "amount", 1990, "txn", txn));
    ev.equal(200, lateRefund.status(), "late REFUNDED notice accepted after the workflow completed");
    stack.awaitNoticesApplied(1, 10_000);
    ev.equal("IGNORED REFUNDED", stack.sql.text(
        "SELECT effect FROM payment_notification WHERE notify_id = 'ntf-late-refund-c2907'"),
        "a new run applied it: IGNORED REFUNDED");
    ev.equal("RUNNING", stack.workflowStatus(wf), "signal-with-start started a new run");
    ev.equal("REFUNDED", status(b), "B stays REFUNDED");
    ev.equal(1L, stack.refundRows(b), "still one refund row");

    stack.recordHistory(a, "c2907-paid-reheld");
    stack.recordHistory(b, "c2907-second-run-after-completion");
    stack.awaitNothingPending(10_000);
    String summary = stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static String status(String orderId) {
    return stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId);
  }

  private static String refundKey(String orderId) {
    for (var row : stack.channel.get("/statement").body().path("rows")) {
      if (orderId.equals(row.path("merchant_order").asText()) && "REFUND".equals(row.path("type").asText())) {
        return row.path("refund_key").asText();
      }
    }
    return null;
  }
}
