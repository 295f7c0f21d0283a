package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * an operator reads and drives orders with the real temporal CLI's query and update
 * commands. {@code temporal workflow query --name status} answers a CREATED order's state as JSON;
 * {@code temporal workflow update execute --name pay} (no input: pay takes none) makes it PAID
 * through the same validator, handler and transitions as the API, with one charge at the channel,
 * and its run ends; a second pay or a cancel then finds no run (exit non-zero, no new event: the
 * API answers such commands from the row). On an order the channel declined, whose run keeps its
 * late-notice window, a second pay and a cancel are refused by the validator, exit non-zero with
 * the refusal, and leave no trace in the history; the first pay's update id again gets its first
 * answer; {@code --name cancel} cancels another order and its unit comes back. The history the CLI
 * shows carries the activities' and timers' summaries, naming the order (docs/DESIGN.md §The
 * operator's CLI, §Readable histories).
 */
@Tag("dev-server-only")
class X29CliQueryAndUpdateTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev =
      new Evidence("X-29", "temporal CLI query and update: pay, cancel, refusals without a trace, summaries");

  private static final String SKU = "sku-x29";
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void cliQueriesAndUpdatesOrders() throws Exception {
    stack.sku(SKU, 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-2901");
    String paid = Buyers.create(buyer, "x29-pay", SKU, 1).text("order_id");
    String cancelled = Buyers.create(buyer, "x29-cancel", SKU, 1).text("order_id");
    String declined = Buyers.create(buyer, "x29-declined", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, declined, java.util.Map.of("decline", true));
    String declinedWf = workflowId(declined);
    String paidWf = workflowId(paid);
    String cancelledWf = workflowId(cancelled);
    ev.note("orders " + paid + " (" + paidWf + ") and " + cancelled + " (" + cancelledWf + "); remaining "
        + stack.sql.remaining(SKU));

    // 1. query: the order's state, as JSON
    TemporalCliProcess.Result query = cli("workflow", "query", "--workflow-id", paidWf, "--name", "status");
    ev.note("temporal workflow query --workflow-id " + paidWf + " --name status → exit " + query.exit() + "\n"
        + query.output());
    ev.equal(0, query.exit(), "the query answers");
    TemporalCliProcess.Result queryJson =
        cli("workflow", "query", "--workflow-id", paidWf, "--name", "status", "--output", "json");
    ev.note("with --output json:\n" + queryJson.output());
    JsonNode state = firstObjectWith(JSON.readTree(queryJson.output()), "order");
    ev.check(state != null, "the JSON answer holds the OrderState");
    JsonNode order = state.path("order");
    ev.equal(paid, text(order, "order_id", "orderId"), "the query names the order");
    ev.equal("CREATED", text(order, "status"), "the query reads CREATED");
    ev.equal(1, order.path("version").asInt(), "version 1");
    ev.equal(1990L, order.path("amount").asLong(), "amount 1990");
    ev.check(state.path("timeline").toString().contains("CREATED"), "the timeline shows the create");

    // 2. update pay, with no input: the API's validator and handler
    TemporalCliProcess.Result pay = cli("workflow", "update", "execute", "--workflow-id", paidWf, "--name", "pay",
        "--update-id", "ops-pay-1");
    ev.note("temporal workflow update execute --workflow-id " + paidWf + " --name pay → exit " + pay.exit() + "\n"
        + pay.output());
    ev.equal(0, pay.exit(), "the CLI's pay is accepted");
    ev.check(pay.output().contains("PAID"), "its result is the handler's answer: PAID");
    stack.awaitStatus(paid, "PAID", 15_000);
    String timeline = stack.sql.timeline(paid);
    ev.note("timeline " + paid + ": " + timeline);
    ev.check(timeline.contains("[CREATED->PAYING v2") && timeline.contains("[PAYING->PAID v3"),
        "PAID through the API's transitions: CREATED → PAYING → PAID");
    ev.equal(1, Buyers.chargeRequests(stack.channel, paid), "one charge request at the channel");
    stack.awaitNoticesApplied(1, 15_000); // the channel's callback: its signal lands before the history is counted

    // 3. a second pay of the PAID order: its run has ended (a PAID order's run ends at once), so the
    // engine refuses it and the history is unchanged; the API answers such a pay from the row
    stack.awaitTrue(() -> "COMPLETED".equals(stack.workflowStatus(paidWf)), 15_000, "the PAID order's run did not end");
    List<HistoryEvent> paidHistory = Histories.of(stack, paidWf);
    TemporalCliProcess.Result payAgain = cli("workflow", "update", "execute", "--workflow-id", paidWf, "--name", "pay",
        "--update-id", "ops-pay-2");
    ev.note("a second pay of the PAID order → exit " + payAgain.exit() + "\n" + payAgain.output());
    ev.check(payAgain.exit() != 0, "the CLI exits non-zero: the PAID order's run has ended");
    ev.equal(paidHistory.size(), Histories.of(stack, paidWf).size(), "and the history of the PAID order is unchanged");
    ev.equal(List.of("ops-pay-1"), acceptedUpdateIds(paidHistory, "pay"), "the only accepted pay is the first one");
    TemporalCliProcess.Result shown = cli("workflow", "show", "--workflow-id", paidWf, "--output", "json");
    ev.equal(0, shown.exit(), "temporal workflow show --output json answers");
    ev.check(shown.output().contains("ops-pay-1") && !shown.output().contains("ops-pay-2"),
        "the CLI's history names the accepted update ops-pay-1, never the refused ops-pay-2");
    ev.equal("PAID", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", paid), "the order stays PAID");
    ev.note("the accepted pay's identity in the history: " + acceptedIdentities(paidHistory, "pay"));

    // 3b. an order the channel declines: FAILED, its run open for late notices; a second pay is
    // refused by the validator with no trace, and the first pay's update id again (an operator
    // retrying) is answered from the history, not run again
    TemporalCliProcess.Result payDeclined = cli("workflow", "update", "execute", "--workflow-id", declinedWf,
        "--name", "pay", "--update-id", "ops-pay-3");
    ev.note("pay of the declined order → exit " + payDeclined.exit() + "\n" + payDeclined.output());
    ev.check(payDeclined.exit() == 0 && payDeclined.output().contains("FAILED"), "the declined order's pay answers FAILED");
    stack.awaitStatus(declined, "FAILED", 15_000);
    stack.awaitNoticesApplied(2, 15_000); // the channel's callbacks: their signals land before the history is counted
    List<HistoryEvent> before = Histories.settled(stack, declinedWf);
    TemporalCliProcess.Result refused = cli("workflow", "update", "execute", "--workflow-id", declinedWf,
        "--name", "pay", "--update-id", "ops-pay-4");
    ev.note("a second pay of the FAILED order → exit " + refused.exit() + "\n" + refused.output());
    ev.check(refused.exit() != 0, "the CLI exits non-zero for a refused update");
    ev.check(refused.output().contains("REJECTED"), "and prints the validator's answer (REJECTED)");
    List<HistoryEvent> after = Histories.of(stack, declinedWf);
    ev.note("history of " + declinedWf + ": " + before.size() + " events before the refused pay, " + after.size() + " after");
    ev.equal(before.size(), after.size(), "the refused pay added no event to the history");
    ev.equal(List.of("ops-pay-3"), acceptedUpdateIds(after, "pay"), "the only accepted pay is the first one");
    TemporalCliProcess.Result retried = cli("workflow", "update", "execute", "--workflow-id", declinedWf, "--name", "pay",
        "--update-id", "ops-pay-3");
    ev.note("the first pay's update id again → exit " + retried.exit() + "\n" + retried.output());
    ev.check(retried.exit() == 0 && retried.output().contains("FAILED"), "a retry with the same --update-id gets the first answer");
    ev.equal(after.size(), Histories.of(stack, declinedWf).size(), "and adds no event");
    ev.equal(1, Buyers.chargeRequests(stack.channel, declined), "one charge request for the declined order");
    ev.equal(1, Buyers.chargeRequests(stack.channel, paid), "one charge request for the PAID order");

    // 4. cancel another order; its unit comes back
    int remainingBefore = stack.sql.remaining(SKU);
    TemporalCliProcess.Result cancel = cli("workflow", "update", "execute", "--workflow-id", cancelledWf,
        "--name", "cancel");
    ev.note("temporal workflow update execute --workflow-id " + cancelledWf + " --name cancel → exit " + cancel.exit()
        + "\n" + cancel.output());
    ev.equal(0, cancel.exit(), "the CLI's cancel is accepted");
    ev.check(cancel.output().contains("CANCELLED"), "its result: CANCELLED");
    stack.awaitStatus(cancelled, "CANCELLED", 15_000);
    ev.note("timeline " + cancelled + ": " + stack.sql.timeline(cancelled));
    ev.equal(remainingBefore + 1, stack.sql.remaining(SKU), "the cancelled order's unit is back in stock");
    ev.equal(0, Buyers.chargeRequests(stack.channel, cancelled), "the cancelled order never reached the channel");

    // 5. a cancel of the PAID order finds no run; of the FAILED order, refused by the validator, no trace
    TemporalCliProcess.Result cancelPaid = cli("workflow", "update", "execute", "--workflow-id", paidWf,
        "--name", "cancel", "--update-id", "ops-cancel-paid");
    ev.note("cancel of the PAID order → exit " + cancelPaid.exit() + "\n" + cancelPaid.output());
    ev.check(cancelPaid.exit() != 0, "a cancel of the PAID order is refused: its run has ended");
    ev.equal(paidHistory.size(), Histories.of(stack, paidWf).size(), "the refused cancel added no event");
    ev.equal("PAID", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", paid), "the order stays PAID");
    int eventsBefore = Histories.settled(stack, declinedWf).size();
    TemporalCliProcess.Result cancelFailed = cli("workflow", "update", "execute", "--workflow-id", declinedWf,
        "--name", "cancel", "--update-id", "ops-cancel-failed");
    ev.note("cancel of the FAILED order → exit " + cancelFailed.exit() + "\n" + cancelFailed.output());
    ev.check(cancelFailed.exit() != 0 && cancelFailed.output().contains("REJECTED"), "a cancel of a FAILED order is refused");
    ev.equal(eventsBefore, Histories.of(stack, declinedWf).size(), "the refused cancel added no event");
    ev.equal("FAILED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", declined), "the order stays FAILED");

    // 6. the history names what each activity and timer is for
    List<String> summaries = summaries(Histories.of(stack, paidWf));
    ev.note("summaries in the history of " + paidWf + ": " + summaries);
    ev.check(summaries.contains("charge " + paid + " 1990"), "the charge's summary is \"charge " + paid + " 1990\"");
    ev.check(summaries.stream().anyMatch(s -> s.startsWith("expire reservation of " + paid + " at ")),
        "the reservation's timer says \"expire reservation of " + paid + " at …\"");
    List<String> cliSummaries = new ArrayList<>();
    cliSummaries(JSON.readTree(shown.output()), cliSummaries);
    ev.note("summaries in temporal workflow show --output json: " + cliSummaries);
    ev.check(cliSummaries.contains("charge " + paid + " 1990"),
        "temporal workflow show --output json carries the charge's summary (userMetadata.summary)");

    stack.recordHistory(paid, "x29-cli-update-pay-refused");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static TemporalCliProcess.Result cli(String... args) throws Exception {
    return TemporalCliProcess.run(stack, args);
  }

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  private static String text(JsonNode node, String... names) {
    for (String n : names) {
      if (node.has(n)) return node.get(n).asText();
    }
    return null;
  }

  /** The first object (depth first) with the field, or null. */
  private static JsonNode firstObjectWith(JsonNode node, String field) {
    if (node == null) return null;
    if (node.isObject() && node.has(field)) return node;
    for (JsonNode child : node) {
      JsonNode found = firstObjectWith(child, field);
      if (found != null) return found;
    }
    return null;
  }

  /** The update ids of the accepted updates with that name. */
  private static List<String> acceptedUpdateIds(List<HistoryEvent> events, String name) {
    List<String> ids = new ArrayList<>();
    for (HistoryEvent e : events) {
      if (e.getEventType() != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) continue;
      var request = e.getWorkflowExecutionUpdateAcceptedEventAttributes().getAcceptedRequest();
      if (request.getInput().getName().equals(name)) ids.add(request.getMeta().getUpdateId());
    }
    return ids;
  }

  /**
   * The summaries in the CLI's JSON history: each event's userMetadata.summary is a payload whose
   * data is the base64 of a json/plain string.
   */
  private static void cliSummaries(JsonNode node, List<String> out) throws Exception {
    if (node.isObject() && node.has("userMetadata")) {
      JsonNode data = node.path("userMetadata").path("summary").path("data");
      if (data.isTextual()) {
        out.add(JSON.readTree(java.util.Base64.getDecoder().decode(data.asText())).asText());
      }
    }
    for (JsonNode child : node) cliSummaries(child, out);
  }

  private static List<String> acceptedIdentities(List<HistoryEvent> events, String name) {
    List<String> ids = new ArrayList<>();
    for (HistoryEvent e : events) {
      if (e.getEventType() != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) continue;
      var request = e.getWorkflowExecutionUpdateAcceptedEventAttributes().getAcceptedRequest();
      if (request.getInput().getName().equals(name)) ids.add(request.getMeta().getIdentity());
    }
    return ids;
  }

  /** The summaries the events carry (json/plain strings), in history order. */
  static List<String> summaries(List<HistoryEvent> events) throws Exception {
    List<String> out = new ArrayList<>();
    for (HistoryEvent e : events) {
      if (!e.hasUserMetadata() || !e.getUserMetadata().hasSummary()) continue;
      out.add(JSON.readTree(e.getUserMetadata().getSummary().getData().toString(StandardCharsets.UTF_8)).asText());
    }
    return out;
  }
}
