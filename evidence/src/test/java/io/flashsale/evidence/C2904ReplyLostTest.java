package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-04: the channel charges but its reply is lost (delayed past the short channel deadline). The order
 * goes UNKNOWN, not FAILED, keeps its unit, shows as pending in reconciliation, and converges to
 * PAID by the workflow's first query (2 s later here). The held callback then arrives as a duplicate.
 */
@Tag("fast") // in ./flashsale test --fast
class C2904ReplyLostTest {
  // first query 2 s after UNKNOWN (default 1 s): room for the "before convergence" reconcile on a busy machine
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "2s");
  @RegisterExtension static final Evidence ev = new Evidence("C29-04", "reply lost → UNKNOWN → query → PAID");

  @Test
  void replyLostConvergesByQuery() throws Exception {
    stack.sku("sku-c2904", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-0042");
    String orderId = Buyers.create(buyer, "c2904", "sku-c2904", 1).text("order_id");
    Buyers.fault(stack.channel, orderId, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));

    HttpJson.Reply pay = Buyers.pay(buyer, orderId);
    ev.equal(200, pay.status(), "pay answers 200");
    ev.equal("UNKNOWN", pay.text("status"), "a lost reply answers UNKNOWN, not FAILED");
    ev.equal("HELD", stack.sql.text("SELECT status FROM reservation WHERE reservation_key = ?", orderId + "/r1"),
        "the unit stays HELD while UNKNOWN");
    ev.equal(4, stack.sql.remaining("sku-c2904"), "no unit released");
    String before = stack.reconcileSummary();
    ev.note("before convergence: " + before);
    ev.check(before.contains(" mismatches=0 ") && before.contains(" pending=1 "), "reconcile: mismatches=0 pending=1");
    // the money is checked while the order is in flight: channel_net in [paid_sum, paid_sum + 1990]
    ev.check(before.contains(" pending=1 pending_sum=1990 ") && before.contains(" paid_sum=0 "),
        "reconcile: pending_sum=1990 paid_sum=0, channel_net within the range (no GLOBAL line)");

    stack.awaitStatus(orderId, "PAID", 10_000);
    String timeline = stack.sql.timeline(orderId);
    ev.note("timeline " + orderId + ": " + timeline);
    ev.equal("[-->CREATED v1 create] [CREATED->PAYING v2 pay] [PAYING->UNKNOWN v3 charge timeout] [UNKNOWN->PAID v4 query]",
        timeline, "exact timeline");
    ev.equal("CONFIRMED", stack.sql.text("SELECT status FROM reservation WHERE reservation_key = ?", orderId + "/r1"),
        "reservation CONFIRMED");

    stack.channel.post("/_callbacks/release", Map.of("merchant_order", orderId, "order", "fifo"));
    stack.awaitNoticesApplied(1, 10_000);
    ev.equal(Map.of("DUPLICATE PAID", 1),
        stack.sql.histogram("SELECT effect FROM payment_notification WHERE merchant_order = ?", orderId),
        "the held callback arrives as DUPLICATE PAID");
    ev.equal(1, Buyers.chargeRequests(stack.channel, orderId), "one charge request");
    stack.recordHistory(orderId, "c2904-unknown-query-paid");
    stack.checkReconcileClean(ev, "reconcile clean after convergence");
  }
}
