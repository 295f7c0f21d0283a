package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-06: (1) the same CHARGED callback sent by 16 threads at once: one transition to PAID, one
 * confirm, one ORDER_PAID event, fifteen DUPLICATE PAID. (2) reordered late notices: an order
 * whose reservation expired while UNKNOWN and whose unit was sold to someone else is refunded;
 * its held notices then arrive reversed (REFUNDED first, CHARGED last) and change nothing.
 * The 60 s reservation TTL and the 120 s first query are time-skipped.
 */
// skips the clock past long timers (60 s and more): time skipping exists only in the in-memory engine
@org.junit.jupiter.api.Tag("in-memory-only")
class C2906DuplicateAndLateNoticesTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "2m");
  @RegisterExtension static final Evidence ev = new Evidence("C29-06", "16 identical callbacks; reversed late notices");

  @Test
  void duplicatesAndReorderedLateNotices() throws Exception {
    // part 1: 16 concurrent identical callbacks
    stack.sku("sku-c2906-a", 5, 3);
    HttpJson alice = stack.api.login("t1", "user-0601");
    String a = Buyers.create(alice, "c2906-a", "sku-c2906-a", 1).text("order_id");
    Buyers.fault(stack.channel, a, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(alice, a).text("status"), "order A is UNKNOWN (reply lost)");
    String txn = stack.channel.get("/charges/" + a).text("txn");
    Map<String, Object> notice = Map.of("notify_id", "ntf-c2906", "merchant_order", a, "kind", "CHARGED",
        "amount", 1990, "txn", txn);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<HttpJson.Reply>> replies = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      replies.add(pool.submit(() -> {
        go.await();
        return stack.callback(notice);
      }));
    }
    go.countDown();
    int accepted = 0;
    for (Future<HttpJson.Reply> f : replies) accepted += f.get().status() == 200 ? 1 : 0;
    pool.shutdown();
    ev.equal(16, accepted, "all 16 arrivals answered 200");
    stack.awaitNoticesApplied(16, 15_000);
    Map<String, Integer> effects = stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE merchant_order = ?", a);
    ev.note("effects " + a + " " + effects);
    ev.equal(Map.of("PAID", 1, "DUPLICATE PAID", 15), effects, "PAID=1, DUPLICATE PAID=15");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ? AND event_type = 'ORDER_PAID'", a),
        "one ORDER_PAID outbox row");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM order_transition WHERE order_id = ? AND to_status = 'PAID'", a),
        "one transition to PAID");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM reservation WHERE reservation_key LIKE ? AND status = 'CONFIRMED'",
        a + "/%"), "one confirmed reservation");
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", a, "order", "fifo"));

    // part 2: expired while UNKNOWN, unit sold to another buyer, refunded; late notices reversed
    stack.sku("sku-c2906-b", 1, 3);
    HttpJson bob = stack.api.login("t1", "user-0602");
    HttpJson carol = stack.api.login("t1", "user-0603");
    String b = Buyers.create(bob, "c2906-b", "sku-c2906-b", 1).text("order_id");
    Buyers.fault(stack.channel, b, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(bob, b).text("status"), "order B is UNKNOWN (reply lost)");
    stack.skip(Duration.ofSeconds(61));
    stack.awaitTrue(() -> "RELEASED".equals(stack.sql.text(
        "SELECT status FROM reservation WHERE reservation_key = ?", b + "/r1")), 10_000, "B's reservation not released");
    ev.equal("UNKNOWN", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", b),
        "expiry released B's unit; B still UNKNOWN");
    String c = Buyers.create(carol, "c2906-c", "sku-c2906-b", 1).text("order_id");
    ev.equal("PAID", Buyers.pay(carol, c).text("status"), "another buyer bought the released unit");
    stack.skip(Duration.ofSeconds(60));
    stack.awaitStatus(b, "REFUNDED", 15_000);
    String timeline = stack.sql.timeline(b);
    ev.note("timeline " + b + ": " + timeline);
    ev.check(timeline.endsWith("[UNKNOWN->REFUNDING v4 query stock lost (SOLD_OUT)] [REFUNDING->REFUNDED v5 refund reply]"),
        "B: query found the charge, the unit was gone, refunded");
    HttpJson.Reply released = stack.channel.post("/_callbacks/release", Map.of("merchant_order", b, "order", "reverse"));
    ev.equal(2, released.body().path("released").asInt(), "two held notices (CHARGED, REFUNDED) released reversed");
    stack.awaitNoticesApplied(18, 15_000);
    List<String> late = stack.sql.column(
        "SELECT kind || ' -> ' || effect FROM payment_notification WHERE merchant_order = ? ORDER BY id", b);
    ev.note("late notices " + b + " in arrival order " + late);
    ev.equal(List.of("REFUNDED -> IGNORED REFUNDED", "CHARGED -> DUPLICATE REFUNDED"), late,
        "REFUNDED first → IGNORED REFUNDED, CHARGED last → DUPLICATE REFUNDED");
    ev.equal("REFUNDED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", b), "B stays REFUNDED");
    ev.equal(5L, stack.sql.count("SELECT max(version) FROM order_transition WHERE order_id = ?", b),
        "no transition after REFUNDED");
    long refunds = 0;
    for (var row : stack.channel.get("/statement").body().path("rows")) {
      if (b.equals(row.path("merchant_order").asText()) && "REFUND".equals(row.path("type").asText())) refunds++;
    }
    ev.equal(1L, refunds, "one refund in the ledger");
    stack.recordHistory(a, "c2906-sixteen-callbacks");
    stack.recordHistory(b, "c2906-expired-refunded-late-notices");
    stack.awaitNothingPending(10_000);
    String summary = stack.checkReconcileClean(ev, "reconcile clean");
  }
}
