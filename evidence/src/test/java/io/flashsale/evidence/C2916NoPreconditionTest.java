package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.cli.HttpJson;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-16 (negative control): the two halves of "a transition happens only from the status it
 * was decided on", each switched off alone.
 *
 * <p><b>The transition precondition</b> (the status rule of {@code PaymentRules.onCharged}: a
 * success pays only a CREATED, PAYING or UNKNOWN order). Switched off, and only it (the row lock,
 * the conditional write and the reservation confirm stay), a late CHARGED notice pays a REFUNDED
 * order: the confirm of its released unit fails, so it takes a new one (/r2) and the order is PAID
 * over its refund. Reconciliation finds PAID_BUT_REFUNDED and channel_net ≠ paid_sum; confirmed =
 * paid still holds, because the confirm still had to take effect.
 *
 * <p><b>The conditional write</b> ({@code AND status = ? AND version = ?} in the status UPDATE).
 * Every decision is also made under the order's row lock, and with the lock on the condition can
 * never refuse anything (a unit test shows dropping it changes no answer). It matters on its own
 * wherever a decision is made without the lock, so this part switches the row lock off and
 * makes two decisions on one order overlap the way they can in production: the success step's
 * first attempt outlives its 15 s start-to-close timeout (a test session holds the reservation
 * table, so it waits at its confirm) and the retry reads the same PAYING row. With the condition
 * on, the attempt that comes second is refused and rolled back (one PAID, one unit, one event,
 * shipped once); with only the condition dropped as well, its stale decision is written: a
 * second PAYING→PAID, a second unit confirmed for the same order, a second ORDER_PAID that the
 * consumer ships again. Reconciliation finds confirmed ≠ paid.
 */
class C2916NoPreconditionTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final NegativeControl restore = new NegativeControl(stack);
  @RegisterExtension static final Evidence ev = new Evidence("C29-16", "negative control: no transition precondition");

  private static final String WAITING_CONFIRMS = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
      + " AND query LIKE 'UPDATE reservation SET status = ''CONFIRMED''%'";
  private static final String ATTEMPTS_OPEN = "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
      + " WHERE c.relname IN ('orders', 'reservation') AND l.pid <> pg_backend_pid()";

  @Test
  void noPreconditionThenNoConditionalWrite() throws Exception {
    noPreconditionIsCaught();
    staleDecisionWithoutTheRowLock();
  }

  private void noPreconditionIsCaught() throws Exception {
    stack.sku("sku-c2916", 5, 3);
    HttpJson a = stack.api.login("t1", "user-1601");
    String id = Buyers.create(a, "c2916", "sku-c2916", 1).text("order_id");
    ev.equal("CANCELLED", Buyers.cancel(a, id).text("outcome"), "order cancelled");
    // the channel's notices of this order come 1.5 s after its replies: on the in-memory engine a
    // refund notice that settles the order while the refund round's reply is on its way makes the run
    // cancel a round the server already completed, and that server then never completes the task
    // (evidence/LIMITS.md); the dev server takes both orders
    Buyers.fault(stack.channel, id, Map.of("callback_delay_ms", 1_500));
    // a charge reaches the channel after the cancel (e.g. from a stale client): compensated by a refund
    stack.channel.post("/charge", Map.of("merchant_order", id, "amount", 1990,
        "notify_url", "http://127.0.0.1:" + stack.wiring.apiPort() + "/callbacks/payment"));
    stack.awaitStatus(id, "REFUNDED", 20_000);
    // the row is REFUNDED before the refund's notice has its effect written back and before the run
    // has taken the step's result (the workflow audit would see REFUNDING v3 against the row's v4)
    stack.awaitNoticesApplied(2, 20_000);
    ev.note("timeline " + id + ": " + stack.sql.timeline(id));
    String full = stack.reconcile().trim();
    for (long until = System.currentTimeMillis() + 20_000; !full.contains(" mismatches=0 ")
        && System.currentTimeMillis() < until; ) {
      Thread.sleep(200);
      full = stack.reconcile().trim();
    }
    String before = full.lines().filter(l -> l.contains(" mismatches=")).findFirst().orElse(full);
    ev.note("before the switch: " + (before.contains(" mismatches=0 ") ? before : full));
    ev.check(before.contains(" mismatches=0 "), "clean before the switch (within 20 s of the refund)");

    stack.wiring.safeguards().switchOff(Safeguards.Safeguard.TRANSITION_PRECONDITION);
    String txn = stack.channel.get("/charges/" + id).text("txn");
    stack.callback(Map.of("notify_id", "ntf-late-c2916", "merchant_order", id,
        "kind", "CHARGED", "amount", 1990, "txn", txn == null ? "txn-x" : txn));
    stack.awaitStatus(id, "PAID", 10_000);
    stack.wiring.safeguards().restore();
    String timeline = stack.sql.timeline(id);
    ev.note("timeline " + id + ": " + timeline);
    ev.check(timeline.matches(".*\\[REFUNDED->PAID v\\d+ callback ntf-late-c2916 re-reserved " + id + "/r2\\]"),
        "the late success paid the REFUNDED order on a new unit (the confirm still had to take effect)");
    ev.equal("CONFIRMED", stack.sql.text("SELECT status FROM reservation WHERE reservation_key = ?", id + "/r2"),
        "/r2 CONFIRMED");

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("mismatch " + id + " PAID PAID_BUT_REFUNDED"), "caught: PAID_BUT_REFUNDED");
    ev.check(report.contains("GLOBAL channel_net=0 != paid_sum=1990"), "caught: channel_net=0 != paid_sum=1990");
    ev.check(!report.contains("GLOBAL confirmed="), "confirmed = paid: only the status rule was off");
  }

  private void staleDecisionWithoutTheRowLock() throws Exception {
    stack.sku("sku-c2916-w", 5, 3);
    stack.wiring.safeguards().switchOff(Safeguards.Safeguard.ROW_LOCK);
    String kept = overlappingSuccessSteps("c2916-guarded", "user-1602");
    ev.note("timeline " + kept + " (row lock off, conditional write on): " + stack.sql.timeline(kept));
    ev.equal(1L, paidTransitions(kept), kept + ": one transition to PAID (the stale attempt's write was refused)");
    ev.equal(List.of("ORDER_PAID"), events(kept), kept + ": one ORDER_PAID event");
    ev.equal(Map.of("CONFIRMED", 1), reservations(kept), kept + ": one unit confirmed, the stale attempt's /r2 rolled back");

    stack.wiring.safeguards().switchOff(Safeguards.Safeguard.CONDITIONAL_WRITE);
    String overwritten = overlappingSuccessSteps("c2916-unguarded", "user-1603");
    stack.wiring.safeguards().restore();
    ev.note("timeline " + overwritten + " (row lock off, conditional write off): " + stack.sql.timeline(overwritten));
    ev.equal(2L, paidTransitions(overwritten), overwritten + ": the stale decision was written too: PAYING->PAID twice");
    ev.equal(List.of("ORDER_PAID", "ORDER_PAID"), events(overwritten), overwritten + ": two ORDER_PAID events");
    ev.equal(Map.of("CONFIRMED", 2), reservations(overwritten), overwritten + ": two units confirmed for one order");

    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL") == 0, 30_000,
        "outbox not drained");
    ev.equal(1L, shipCount(kept), kept + " shipped once");
    ev.equal(2L, shipCount(overwritten), overwritten + " shipped twice: the consumer took the second event as newer");

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    long confirmed = stack.sql.count("SELECT count(*) FROM reservation WHERE status = 'CONFIRMED'");
    long paid = stack.sql.count("SELECT count(*) FROM orders WHERE status = 'PAID'");
    ev.equal(paid + 1, confirmed, "one unit more confirmed than orders paid");
    ev.check(report.contains("GLOBAL confirmed=" + confirmed + " != paid=" + paid),
        "caught: confirmed=" + confirmed + " != paid=" + paid);
    ev.check(report.lines().noneMatch(l -> l.contains(kept)), kept + " is in no mismatch line");
  }

  /**
   * Creates and pays one order while a test session holds the reservation table: the success
   * step (PAYING→PAID, after the channel's CHARGED reply) reads the order, waits at its confirm
   * and outlives its start-to-close timeout; its retry reads the same row and waits too. Then the
   * table is let go and both run on. Returns the order id once it is PAID and both attempts ended.
   */
  private String overlappingSuccessSteps(String key, String user) throws Exception {
    HttpJson buyer = stack.api.login("t1", user);
    String id = Buyers.create(buyer, key, "sku-c2916-w", 1).text("order_id");
    CompletableFuture<HttpJson.Reply> pay;
    try (Connection lock = stack.db().dataSource().getConnection()) {
      lock.setAutoCommit(false);
      lock.createStatement().execute("LOCK TABLE reservation IN SHARE MODE");
      pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, id));
      long start = System.currentTimeMillis();
      stack.awaitTrue(() -> stack.sql.count(WAITING_CONFIRMS) >= 2, 45_000,
          id + ": the success step and its retry were not both waiting at the confirm");
      ev.note(id + ": two attempts of the success step read PAYING and wait at the confirm (retry after "
          + (System.currentTimeMillis() - start) + " ms)");
      lock.commit();
    }
    stack.awaitStatus(id, "PAID", 30_000);
    // each attempt holds its table locks from its first read to its end: none left means both ended
    stack.awaitTrue(() -> stack.sql.count(ATTEMPTS_OPEN) == 0, 15_000, id + ": an attempt is still running");
    HttpJson.Reply answer = pay.get(30, java.util.concurrent.TimeUnit.SECONDS);
    ev.note(id + ": pay answered " + answer.status() + " " + answer.raw());
    stack.awaitNoticesApplied(1, 15_000); // the channel's own callback: a duplicate either way
    return id;
  }

  private static long paidTransitions(String id) {
    return stack.sql.count("SELECT count(*) FROM order_transition WHERE order_id = ? AND to_status = 'PAID'", id);
  }

  private static List<String> events(String id) {
    return stack.sql.column("SELECT event_type FROM outbox WHERE order_id = ? ORDER BY event_id", id);
  }

  private static Map<String, Integer> reservations(String id) {
    return stack.sql.histogram("SELECT status FROM reservation WHERE reservation_key LIKE ?", id + "/%");
  }

  private static long shipCount(String id) {
    return stack.sql.count("SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment WHERE order_id = ?", id);
  }
}
