package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.enums.v1.EventType;
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
 * commands the order already refuses are answered by the update validator and leave no
 * trace in the history (a real server caps updates per run), with the same HTTP answers as
 * before: of 8 concurrent pays one is PAID and seven are 409 REJECTED; later pays and a cancel of
 * the PAID order (whose run has ended: answered from the row) are 409 REJECTED, a second cancel 200
 * REPLAY_CANCEL, none of them accepted into the history. A client of the engine gets the
 * validator's answer from the failure's message (SDK 1.38 drops its details; printed), here for a
 * declined order, whose run stays open for late notices. A stream of 16 callbacks: the first pays
 * the UNKNOWN order and its run ends; each later one (another charge) starts a short run by
 * signal-with-start that applies it and ends; no run is left open and no run piles up timers. The channel's notice of the charge an order was paid with, arriving after
 * the pay, is answered from the order's row and reaches no history.
 */
class X18CommandValidatorsTest {
  // the stack's channel deadline (5 s): the 8 concurrent pays and D's are answered by their charge;
  // C's reply comes after it (see there)
  @RegisterExtension static final Stack stack = new Stack().with("orders.unknownFirstQuery", "2m");
  @RegisterExtension static final Evidence ev = new Evidence("X-18", "validators refuse without history; no timer pile-up; copies and the paying charge's notice answered at arrival");

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  private static long accepted(String orderId) {
    return Histories.count(Histories.of(stack, workflowId(orderId)),
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
  }

  private static int version(String orderId) {
    return (int) stack.sql.count("SELECT version FROM orders WHERE order_id = ?", orderId);
  }

  @Test
  void refusedCommandsStayOutOfHistory() throws Exception {
    stack.sku("sku-x18", 5, 3);
    HttpJson alice = stack.api.login("t1", "user-1801");
    String a = Buyers.create(alice, "x18-a", "sku-x18", 1).text("order_id");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Buyers.Settled>> pays = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      // each pay its own Idempotency-Key: a 503 (no answer in time) is sent again with it, and gets
      // the answer of the pay the engine took, if it took it
      String key = "x18-pay-" + i;
      pays.add(pool.submit(() -> {
        go.await();
        return Buyers.retrying503(() -> Buyers.pay(alice, a, key));
      }));
    }
    go.countDown();
    int paid = 0;
    int rejected = 0;
    List<Buyers.Settled> answers = new ArrayList<>();
    for (Future<Buyers.Settled> f : pays) {
      Buyers.Settled r = f.get();
      answers.add(r);
      if (r.status() == 200 && "PAID".equals(r.text("status"))) paid++;
      if (r.status() == 409 && "REJECTED".equals(r.text("outcome"))) rejected++;
    }
    pool.shutdown();
    ev.note("8 concurrent pays: PAID " + paid + ", 409 REJECTED " + rejected + "; " + Buyers.retriesNote(answers));
    ev.equal(1, paid, "of 8 concurrent pays one is 200 PAID");
    ev.equal(7, rejected, "the other seven are 409 REJECTED");
    long before = accepted(a);
    ev.note("updates accepted into " + a + "'s history after the race: " + before
        + " (create, and the pays that passed the validator together)");
    for (int i = 0; i < 3; i++) {
      HttpJson.Reply r = Buyers.pay(alice, a);
      ev.check(r.status() == 409 && "REJECTED".equals(r.text("outcome")) && "PAID".equals(r.text("status"))
          && r.body().path("version").asInt() > 0, "pay on a PAID order: 409 REJECTED PAID with its version (" + r.raw() + ")");
    }
    HttpJson.Reply cancelPaid = Buyers.cancel(alice, a);
    ev.check(cancelPaid.status() == 409 && "REJECTED".equals(cancelPaid.text("outcome")),
        "cancel of a PAID order: 409 REJECTED (" + cancelPaid.raw() + ")");
    // a PAID order's run has ended (docs/DESIGN.md §Workflow design): a client of the engine finds no run
    try {
      stack.wiring.temporal().client().newWorkflowStub(io.flashsale.workflows.OrderWorkflow.class, workflowId(a)).pay();
      ev.check(false, "a pay of a PAID order through the engine finds its run ended");
    } catch (io.temporal.client.WorkflowNotFoundException e) {
      ev.note("a pay of the PAID order through the engine: " + e.getClass().getSimpleName() + " (its run has ended)");
    }
    // what reaches a client of this engine from a validator's refusal: SDK 1.38 wraps the failure in
    // the worker (message only), so the API reads the answer from the message (DESIGN.md §Workflow design)
    String e = Buyers.create(alice, "x18-e", "sku-x18", 1).text("order_id");
    Buyers.fault(stack.channel, e, Map.of("decline", true));
    ev.equal("FAILED", Buyers.pay(alice, e).text("status"), "order E is declined: FAILED, its run open for late notices");
    long acceptedE = accepted(e);
    try {
      stack.wiring.temporal().client().newWorkflowStub(io.flashsale.workflows.OrderWorkflow.class, workflowId(e)).pay();
      ev.check(false, "a pay of a FAILED order through the engine is refused by its validator");
    } catch (io.temporal.client.WorkflowUpdateException refused) {
      io.temporal.failure.ApplicationFailure delivered = (io.temporal.failure.ApplicationFailure) refused.getCause();
      ev.note("a validator's refusal reaches the client as type " + delivered.getType() + " with "
          + delivered.getDetails().getSize() + " details: " + delivered.getOriginalMessage());
      ev.equal(new io.flashsale.workflows.CommandResult(io.flashsale.domain.CommandOutcome.REJECTED,
          io.flashsale.domain.OrderStatus.FAILED, version(e)), io.flashsale.workflows.CommandResult.refusedBy(refused),
          "the client recovers the typed answer: REJECTED FAILED");
    }
    ev.equal(acceptedE, accepted(e), "the refused pay of E did not enter its history");
    ev.equal(before, accepted(a), "none of the four refused commands entered the history of A");
    ev.equal(1, Buyers.chargeRequests(stack.channel, a), "one charge at the channel");
    stack.recordHistory(a, "x18-rejected-pays");

    HttpJson bob = stack.api.login("t1", "user-1802");
    String b = Buyers.create(bob, "x18-b", "sku-x18", 1).text("order_id");
    HttpJson.Reply first = Buyers.cancel(bob, b);
    ev.check(first.status() == 200 && "CANCELLED".equals(first.text("outcome")), "cancel: 200 CANCELLED");
    long afterCancel = accepted(b);
    HttpJson.Reply again = Buyers.cancel(bob, b);
    ev.check(again.status() == 200 && "REPLAY_CANCEL".equals(again.text("outcome")) && "CANCELLED".equals(again.text("status")),
        "second cancel: 200 REPLAY_CANCEL (" + again.raw() + ")");
    HttpJson.Reply payCancelled = Buyers.pay(bob, b);
    ev.check(payCancelled.status() == 409 && "REJECTED".equals(payCancelled.text("outcome"))
        && "CANCELLED".equals(payCancelled.text("status")), "pay of a CANCELLED order: 409 REJECTED CANCELLED");
    ev.equal(afterCancel, accepted(b), "the replayed cancel and the refused pay are not in the history");
    ev.equal(4, stack.sql.remaining("sku-x18"), "the cancelled unit is back on sale");
    stack.recordHistory(b, "x18-cancel-replayed");
  }

  @Test
  void aCallbackStreamLeavesNoTimerBehind() throws Exception {
    stack.sku("sku-x18-storm", 5, 3);
    HttpJson carol = stack.api.login("t1", "user-1803");
    String c = Buyers.create(carol, "x18-c", "sku-x18-storm", 1).text("order_id");
    // the reply is lost: it comes 1.2 s after the channel deadline (the pay waits the deadline out)
    Buyers.fault(stack.channel, c, Map.of("reply_delay_ms", stack.channelTimeoutMs() + 1_200, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(carol, c).text("status"), "order C is UNKNOWN (reply lost)");
    String txn = stack.channel.get("/charges/" + c).text("txn");
    String unknownRun = stack.latestRunId(workflowId(c));
    long appliedBefore = stack.sql.count("SELECT count(*) FROM payment_notification WHERE effect IS NOT NULL");
    for (int i = 1; i <= 16; i++) {
      // the first pays the order; the rest report other charges of the same amount, which only the
      // workflow answers (a notice of the charge the order was settled with is answered at arrival)
      HttpJson.Reply r = stack.callback(Map.of("notify_id", "ntf-x18-" + i, "merchant_order", c, "kind", "CHARGED",
          "amount", 1990, "txn", streamTxn(txn, i)));
      ev.check(r.status() == 200, "callback " + i + " accepted");
      stack.awaitNoticesApplied((int) appliedBefore + i, 15_000); // one wake-up of the workflow each
    }
    ev.equal(Map.of("PAID", 1, "DUPLICATE PAID", 15), stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE merchant_order = ?", c), "PAID once, 15 duplicates");
    // copies of a notice the order applied are answered from their arrival row: no signal wakes the workflow
    long signalled = Histories.count(Histories.of(stack, workflowId(c)), EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED);
    for (int i = 1; i <= 4; i++) {
      HttpJson.Reply copy = stack.callback(Map.of("notify_id", "ntf-x18-" + i, "merchant_order", c, "kind", "CHARGED",
          "amount", 1990, "txn", streamTxn(txn, i)));
      ev.check(copy.status() == 200 && "DUPLICATE PAID".equals(copy.text("effect")),
          "a copy of applied notice ntf-x18-" + i + " is answered DUPLICATE PAID at arrival (" + copy.status() + ")");
    }
    ev.equal(signalled, Histories.count(Histories.of(stack, workflowId(c)), EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
        "the 4 copies signalled nothing: " + signalled + " signals before and after");
    ev.equal(Map.of("PAID", 1, "DUPLICATE PAID", 19), stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE merchant_order = ?", c), "every arrival recorded, PAID still once");
    // the run that was UNKNOWN took the first callback and ended with PAID; the others each came to
    // a run of their own, which applied it and ended (a PAID order's run ends at once)
    var events = stack.wiring.temporal().client().fetchHistory(workflowId(c), unknownRun).getHistory().getEventsList();
    long started = Histories.count(events, EventType.EVENT_TYPE_TIMER_STARTED);
    long cancelled = Histories.count(events, EventType.EVENT_TYPE_TIMER_CANCELED);
    int outstanding = Histories.maxOutstandingTimers(events);
    ev.note("timers in the history of " + c + "'s UNKNOWN run: started " + started + ", cancelled " + cancelled
        + ", most running at once " + outstanding + "; latest run " + stack.latestRunId(workflowId(c)));
    ev.check(outstanding <= 1, "at most one timer running at any point (got " + outstanding + ")");
    // a callback sent while the run's last task was in flight still reaches it (printed)
    ev.check(Histories.count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) >= 1,
        "the UNKNOWN run took the first callback, then ended");
    stack.awaitTrue(() -> "COMPLETED".equals(stack.workflowStatus(workflowId(c))), 15_000,
        "the latest run of " + c + " did not end");
    ev.check(Histories.count(Histories.of(stack, workflowId(c)), EventType.EVENT_TYPE_TIMER_STARTED) == 0,
        "the latest run, started by a later callback, applied it and ended without a timer");
    stack.recordHistory(c, "x18-callback-stream-no-timer-pileup");
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", c, "order", "fifo"));
    stack.awaitNothingPending(10_000);
  }

  @Test
  void theNoticeOfThePayingChargeAfterThePayReachesNoHistory() throws Exception {
    stack.sku("sku-x18-notice", 5, 3);
    HttpJson dave = stack.api.login("t1", "user-1804");
    String d = Buyers.create(dave, "x18-d", "sku-x18-notice", 1).text("order_id");
    Buyers.fault(stack.channel, d, Map.of("hold_callbacks", true));
    ev.equal("PAID", Buyers.pay(dave, d).text("status"), "order D PAID by the charge reply");
    String txn = stack.channel.get("/charges/" + d).text("txn");
    ev.equal(txn, stack.sql.text("SELECT charge_txn FROM orders WHERE order_id = ?", d), "D keeps the charge it was paid with");

    // the channel's own notice of that charge, after the reply (a channel's notice usually comes later)
    HttpJson.Reply released = stack.channel.post("/_callbacks/release", Map.of("merchant_order", d, "order", "fifo"));
    ev.equal(1, released.body().path("released").asInt(), "the channel's notice released");
    ev.equal(Map.of("DUPLICATE PAID", 1), stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE merchant_order = ?", d), "its arrival recorded DUPLICATE PAID");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM payment_notification WHERE merchant_order = ?"
        + " AND applied_at = received_at", d), "answered at its arrival (applied_at = received_at)");
    var events = Histories.of(stack, workflowId(d));
    ev.equal(0L, Histories.count(events, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED), "no signal in D's history");
    ev.note("events in " + d + "'s history, create → pay → PAID with the channel's notice: " + events.size());
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ? AND event_type = 'ORDER_PAID'", d),
        "one ORDER_PAID event");
    stack.recordHistory(d, "x18-paid-notice-after-reply");
  }

  /** The stream's i-th txn: the order's charge first, then charges the order was not settled with. */
  private static String streamTxn(String charge, int i) {
    return i == 1 ? charge : charge + "-other-" + i;
  }
}
