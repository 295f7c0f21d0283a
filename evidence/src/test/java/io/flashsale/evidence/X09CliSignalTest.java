package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * an operator drives an order with the real temporal CLI. An order is stuck UNKNOWN after a
 * lost reply (its first query is far away); visibility lists it by OrderStatus; a
 * {@code temporal workflow signal --name paymentNotification} with the callback's JSON fields but
 * no operator proof (anyone who reaches the engine) is recorded as REJECTED and the order stays
 * UNKNOWN; the same fields with the proof {@code ./flashsale operator-notice} makes under the
 * admin credential make it PAID with the same rules as the HTTP callback; a malformed payload, or
 * none at all, is recorded as REJECTED, not dropped; once PAID the run has ended, so that signal
 * again is refused by the engine (the channel's own copy of the charge is answered from the row);
 * reconcile is clean and names the order the operator settled.
 */
@Tag("dev-server-only")
class X09CliSignalTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "10m");
  @RegisterExtension static final Evidence ev = new Evidence("X-09", "temporal CLI signal: UNKNOWN → PAID, duplicate, rejected");

  @Test
  void cliSignalDrivesTheOrder() throws Exception {
    stack.sku("sku-x09", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-0901");
    String orderId = Buyers.create(buyer, "x09", "sku-x09", 1).text("order_id");
    String other = Buyers.create(buyer, "x09-other", "sku-x09", 1).text("order_id");
    Buyers.fault(stack.channel, orderId, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(buyer, orderId).text("status"), "a lost reply leaves the order UNKNOWN");
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
    String txn = stack.channel.get("/charges/" + orderId).text("txn");
    ev.note("order " + orderId + " workflow " + workflowId + " charged at the channel as " + txn);

    // visibility is eventually consistent: poll the CLI's own listing
    String[] listed = {""};
    boolean found = stack.within(() -> {
      try {
        listed[0] = TemporalCliProcess.run(stack, "workflow", "list", "--query", "OrderStatus=\"UNKNOWN\"").output();
        return listed[0].contains(workflowId);
      } catch (Exception e) {
        return false;
      }
    }, 15_000);
    ev.note("temporal workflow list --query 'OrderStatus=\"UNKNOWN\"':\n" + listed[0]);
    ev.check(found, "the CLI lists the UNKNOWN order by its OrderStatus search attribute");
    String otherWorkflow = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", other);
    ev.check(!listed[0].contains(otherWorkflow), "the CREATED order is not listed as UNKNOWN");

    // anyone who reaches the engine: the callback's fields, no proof
    String forged = "{\"notify_id\":\"ops-0\",\"kind\":\"CHARGED\",\"amount\":1990,\"txn\":\"" + txn + "\"}";
    ev.equal(0, TemporalCliProcess.run(stack, "workflow", "signal", "--workflow-id", workflowId,
        "--name", "paymentNotification", "--input", forged).exit(), "a signal without an operator proof reaches the workflow");
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM payment_notification WHERE notify_id = 'ops-0'"
        + " AND effect IS NOT NULL") == 1, 15_000, "the unproved signal recorded with its effect");
    String forgedEffect = stack.sql.text("SELECT effect FROM payment_notification WHERE notify_id = 'ops-0'");
    ev.note("the signal without a proof: " + forgedEffect);
    ev.check(forgedEffect.startsWith("REJECTED no valid operator_proof"), "recorded as REJECTED: no valid operator proof");
    ev.equal("UNKNOWN", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId),
        "and the order is still UNKNOWN: reaching the engine settles nothing");

    String malformed = "{\"notify_id\":\"ops-2\",\"kind\":\"CHARGED\",\"amount\":\"lots\"}";
    ev.equal(0, TemporalCliProcess.run(stack, "workflow", "signal", "--workflow-id", workflowId,
        "--name", "paymentNotification", "--input", malformed).exit(), "a malformed signal reaches the workflow");
    ev.equal(0, TemporalCliProcess.run(stack, "workflow", "signal", "--workflow-id", workflowId,
        "--name", "paymentNotification").exit(), "a signal without any payload reaches the workflow");
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM payment_notification WHERE source = 'signal'"
        + " AND effect IS NOT NULL") == 3, 15_000, "the malformed signals recorded with their effect");
    ev.equal("UNKNOWN", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId),
        "and the order is still UNKNOWN");

    // the operator: the same fields, proved with the admin credential (./flashsale operator-notice)
    String proof = io.flashsale.domain.OperatorProof.of(stack.wiring.operatorKey(), orderId, "ops-1", "CHARGED", 1990, txn);
    String input = "{\"notify_id\":\"ops-1\",\"kind\":\"CHARGED\",\"amount\":1990,\"txn\":\"" + txn
        + "\",\"operator_proof\":\"" + proof + "\"}";
    TemporalCliProcess.Result signal = TemporalCliProcess.run(stack, "workflow", "signal", "--workflow-id", workflowId,
        "--name", "paymentNotification", "--input", input);
    ev.note("temporal workflow signal --input '" + input + "' → exit " + signal.exit() + " " + signal.output());
    ev.equal(0, signal.exit(), "the CLI signal is accepted");
    stack.awaitStatus(orderId, "PAID", 15_000);
    ev.note("timeline " + orderId + ": " + stack.sql.timeline(orderId));
    ev.check(stack.sql.timeline(orderId).endsWith("[UNKNOWN->PAID v4 callback ops-1]"),
        "PAID by the signal, through the same transition as a callback");

    // a PAID order's run ends at once (docs/DESIGN.md §Workflow design): the engine refuses a signal to it
    stack.awaitTrue(() -> "COMPLETED".equals(stack.workflowStatus(workflowId)), 15_000, "the PAID order's run did not end");
    TemporalCliProcess.Result again = TemporalCliProcess.run(stack, "workflow", "signal", "--workflow-id", workflowId,
        "--name", "paymentNotification", "--input", input);
    ev.note("the same signal again → exit " + again.exit() + " " + again.output().strip());
    ev.check(again.exit() != 0 && again.output().contains("completed"),
        "the same signal again is refused: the PAID order's run has ended");
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM payment_notification WHERE source = 'signal'"
        + " AND effect IS NOT NULL") == 4, 15_000, "four signal arrivals recorded with their effect");
    Map<String, Integer> effects = stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE source = 'signal'");
    ev.note("signal arrivals by effect: " + effects);
    ev.equal(1, effects.get("PAID"), "first signal: PAID");
    ev.check(effects.keySet().stream().anyMatch(e -> e.startsWith("REJECTED amount")),
        "malformed signal recorded as REJECTED with its reason");
    ev.equal(1, effects.get("REJECTED payload is not a JSON object"), "a signal without payload recorded as REJECTED");
    ev.check(effects.keySet().stream().anyMatch(e -> e.startsWith("REJECTED no valid operator_proof")),
        "the unproved signal among them, REJECTED");
    ev.equal(1, Buyers.chargeRequests(stack.channel, orderId), "one charge request");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", orderId), "one ORDER_PAID event");

    stack.recordHistory(orderId, "x09-cli-signals-paid-duplicate-rejected");
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", orderId, "order", "fifo"));
    stack.awaitNoticesApplied(5, 15_000);
    Buyers.cancel(buyer, other);
    stack.checkReconcileClean(ev, "reconcile clean");
    // the operator's path skips the callback signature: reconciliation names what it settled
    String report = stack.reconcile();
    ev.note(report.lines().filter(l -> l.startsWith("settled by an operator signal")).findFirst().orElse("(no line)"));
    ev.check(report.contains("settled by an operator signal: 1 " + orderId + " by ops-1 PAID"),
        "reconciliation lists " + orderId + " as settled by the operator's signal ops-1");
  }
}
