package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * a pay whose PAYING commit landed but whose update never reached history (issue 37 item 1).
 * The only worker process (workflows, their local database steps and the activities) halts
 * (exit 137) inside the pay update's workflow task, right after the local database step
 * {@code beginPay} committed CREATED→PAYING (v2) and before the task completed
 * ({@link WorkerHaltingAfterBeginPay}, for the one order the test names); nothing reached the
 * channel. Two stages:
 * <ol>
 *   <li>The kill alone. The server keeps the admitted update in memory: the dead task times out
 *   and the next worker gets the update again, so the pay runs once more (its beginPay finds its
 *   own PAYING) and completes: PAID, one charge. Printed, and asserted only as "final, at most
 *   one charge".</li>
 *   <li>The kill, then the engine loses the update: the service (dev server on its file) is
 *   stopped and started again before any worker took the task, as a history host's restart or
 *   a shard's move does; an update that was never accepted is not in the history, so it is gone.
 *   The run never learns of PAYING. The order must converge anyway: a PAYING row with no pay in
 *   flight in the run becomes UNKNOWN and is queried (NOT_FOUND: closed first, then FAILED), its
 *   unit back on sale, the buyer's retried pay answered with a final status, the run closed.</li>
 * </ol>
 * Reconcile clean at the end. Before the fix, stage 2's run read PAYING v2 at the expiry and then
 * waited with no deadline: the order stayed PAYING and its unit held for good. Dev server only: a
 * real server times out the dead worker's task and keeps its state across the restart.
 */
@Tag("dev-server-only")
class X33LostPayUpdateTest {
  // the API process hosts no worker: the pay's workflow task runs in the child that dies; the dev
  // server keeps its state in a file, so stage 2's restart keeps the run and loses only the update
  @RegisterExtension static final Stack stack = new Stack().with("worker", false)
      .with("temporal.devServerDbFile", "") // <dataDir>/temporal.db
      .with("orders.reservationTtl", "15s").with("orders.lateNoticeWindow", "2s");
  @RegisterExtension static final Evidence ev = new Evidence("X-33",
      "worker dies in the pay's task after PAYING committed: the order converges (UNKNOWN, query, close), unit back");

  private static final String SKU = "sku-x33";
  private static final int TOTAL = 5;
  /** From the next worker's start to a final order: the expiry (15 s), a query and a close, with room. */
  private static final long CONVERGE_BOUND_MS = 90_000;
  private static final Set<String> FINAL = Set.of("PAID", "FAILED", "CANCELLED");
  private static final Set<String> NOT_PAID = Set.of("FAILED", "CANCELLED");

  @Test
  void aPayLostAfterItsPayingCommitConverges() throws Exception {
    ev.check(stack.devServer(), "runs on the dev server");
    stack.sku(SKU, TOTAL, 3);
    Path marker = stack.dataDir().resolve("x33-halt-after-begin-pay-of");
    Map<String, String> props = new LinkedHashMap<>(stack.workerProperties());
    props.put(WorkerHaltingAfterBeginPay.MARKER_PROPERTY, marker.toString());
    HttpJson buyer = stack.api.login("t1", "user-3301");

    // stage 1: the kill alone
    String bystander;
    String kept;
    CompletableFuture<HttpResponse<String>> pay;
    try (ChildJvm first = ChildJvm.startMain("x33-worker-1", WorkerHaltingAfterBeginPay.class.getName(), props,
        "worker", "embedded.yml")) {
      first.awaitLog("worker polling", 60_000);
      ev.check(first.logContains("workflows=true, activities=true"), "the first worker hosts workflows and activities");
      // another order through the same worker first: only the named order's step halts the process
      bystander = Buyers.create(buyer, "x33-other", SKU, 1).text("order_id");
      HttpResponse<String> paid = pay(buyer, bystander, "x33-other-pay");
      ev.check(paid.statusCode() == 200 && "PAID".equals(status(bystander)),
          "another order pays through the same worker: PAID (" + paid.statusCode() + " " + paid.body() + ")");
      kept = Buyers.create(buyer, "x33-kept", SKU, 1).text("order_id");
      Files.writeString(marker, kept);
      pay = CompletableFuture.supplyAsync(() -> pay(buyer, kept, "x33-kept-pay"));
      ev.equal(137, first.awaitExit(30_000), "stage 1: the worker halted (137) inside the pay's workflow task");
      ev.check(first.logContains(WorkerHaltingAfterBeginPay.HALT_LINE + kept),
          "it halted right after beginPay of " + kept + " returned");
    }
    String keptWorkflow = workflowId(kept);
    ev.equal("PAYING v2", row(kept), "stage 1: the PAYING commit landed: PAYING v2");
    ev.equal(0, Buyers.chargeRequests(stack.channel, kept), "stage 1: no charge request reached the channel");
    noteHistory("stage 1 at the kill", keptWorkflow);
    try (ChildJvm second = ChildJvm.start("x33-worker-2", stack.workerProperties(), "worker", "embedded.yml")) {
      second.awaitLog("worker polling", 60_000);
      HttpResponse<String> answer = pay.get(60, TimeUnit.SECONDS);
      ev.note("stage 1: the buyer's pay in flight at the kill answered " + answer.statusCode() + " " + answer.body());
      boolean done = stack.within(() -> FINAL.contains(status(kept)), CONVERGE_BOUND_MS);
      ev.note("stage 1: " + row(kept) + ", reservation " + reservation(kept) + "; timeline " + kept + ": "
          + stack.sql.timeline(kept));
      List<HistoryEvent> events = noteHistory("stage 1 after the next worker", keptWorkflow);
      ev.note("stage 1: the engine " + (acceptedPays(events).isEmpty() ? "dropped the update"
          : "kept the update and the next worker accepted it: the pay ran again") + "; charge requests "
          + Buyers.chargeRequests(stack.channel, kept) + ", retried pay answered " + pay(buyer, kept, "x33-kept-pay").body());
      ev.check(done, "stage 1: " + kept + " final within " + CONVERGE_BOUND_MS + " ms (" + row(kept) + ")");
      ev.check(Buyers.chargeRequests(stack.channel, kept) <= 1, "stage 1: at most one charge request");
      second.sigterm();
      ev.equal(0, second.awaitExit(30_000), "stage 1: the next worker stopped");
    }

    // stage 2: the kill, then the engine loses the update
    String id;
    try (ChildJvm third = ChildJvm.startMain("x33-worker-3", WorkerHaltingAfterBeginPay.class.getName(), props,
        "worker", "embedded.yml")) {
      third.awaitLog("worker polling", 60_000);
      id = Buyers.create(buyer, "x33", SKU, 1).text("order_id");
      Files.writeString(marker, id);
      pay = CompletableFuture.supplyAsync(() -> pay(buyer, id, "x33-pay-1"));
      ev.equal(137, third.awaitExit(30_000), "stage 2: the worker halted (137) inside the pay's workflow task");
      ev.check(third.logContains(WorkerHaltingAfterBeginPay.HALT_LINE + id),
          "it halted right after beginPay of " + id + " returned");
    }
    String workflowId = workflowId(id);
    ev.equal("PAYING v2", row(id), "stage 2: the PAYING commit landed: PAYING v2");
    ev.equal(0, Buyers.chargeRequests(stack.channel, id), "stage 2: no charge request reached the channel");
    HttpResponse<String> lost = pay.get(60, TimeUnit.SECONDS);
    ev.note("stage 2: the buyer's pay in flight at the kill answered " + lost.statusCode() + " " + lost.body());
    noteHistory("stage 2 at the kill", workflowId);
    stack.stop();
    stack.start();
    long restartedAt = System.currentTimeMillis();
    ev.note("stage 2: service and dev server restarted; workflow " + stack.workflowStatus(workflowId));
    HttpJson buyerAgain = stack.api.login("t1", "user-3301");
    long queriesBefore = stats("query_requests"); // the stub's counters start again with it
    long closesBefore = stats("close_requests");

    String finalRow;
    HttpResponse<String> retry;
    boolean converged;
    boolean runClosed;
    List<HistoryEvent> events;
    try (ChildJvm fourth = ChildJvm.start("x33-worker-4", stack.workerProperties(), "worker", "embedded.yml")) {
      fourth.awaitLog("worker polling", 60_000);
      converged = stack.within(() -> NOT_PAID.contains(status(id)), CONVERGE_BOUND_MS);
      finalRow = row(id);
      ev.note("stage 2: " + (converged ? "final " : "NOT final ") + (System.currentTimeMillis() - restartedAt)
          + " ms after the restart: " + finalRow + "; reservation " + reservation(id) + "; " + SKU + " remaining "
          + stack.sql.remaining(SKU));
      ev.note("stage 2: timeline " + id + ": " + stack.sql.timeline(id));
      // the buyer retries the pay with its key: it must be answered with a final status, not wait
      retry = pay(buyerAgain, id, "x33-pay-1");
      ev.note("stage 2: the buyer's retried pay answered " + retry.statusCode() + " " + retry.body());
      runClosed = converged && stack.within(() -> !"RUNNING".equals(stack.workflowStatus(workflowId)), 30_000);
      events = noteHistory("stage 2 at the end", workflowId);
      ev.note("stage 2: the engine " + (acceptedPays(events).isEmpty() ? "lost the update: never accepted"
          : "accepted the update " + acceptedPays(events)) + "; workflow " + stack.workflowStatus(workflowId)
          + "; channel: queries +" + (stats("query_requests") - queriesBefore) + ", closes +"
          + (stats("close_requests") - closesBefore) + ", its record of " + id + ": "
          + stack.channel.get("/charges/" + id).raw());
    }

    ev.check(acceptedPays(events).isEmpty(), "stage 2: the pay's update never reached the history");
    ev.check(converged, "stage 2: " + id + " converged to FAILED or CANCELLED within " + CONVERGE_BOUND_MS
        + " ms of the next worker (is " + finalRow + ")");
    String timeline = stack.sql.timeline(id);
    ev.check(timeline.contains("[PAYING->UNKNOWN v3 "), "via UNKNOWN: PAYING->UNKNOWN v3 (" + timeline + ")");
    ev.check(stats("query_requests") > queriesBefore && stats("close_requests") > closesBefore,
        "the channel was queried and the charge closed before the order became final");
    ev.equal(0, ledgerRows(id), "no row of " + id + " in the channel's ledger");
    ev.equal("RELEASED", reservation(id), "its reservation released");
    int sold = (int) stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", SKU);
    ev.equal(TOTAL - sold, stack.sql.remaining(SKU), "the unit is back on sale: remaining " + TOTAL + " less the "
        + sold + " PAID");
    ev.check(retry.statusCode() == 409 && NOT_PAID.stream().anyMatch(s -> retry.body().contains("\"" + s + "\"")),
        "a retried pay gets a definite answer: 409 with the final status (" + retry.statusCode() + " " + retry.body() + ")");
    ev.check(runClosed, "the workflow run closed");
    ev.equal("PAID", status(bystander), "the other order stays PAID");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  /** Notes the history's length, the accepted pays, the dead tasks and the event types; returns it. */
  private static List<HistoryEvent> noteHistory(String when, String workflowId) {
    List<HistoryEvent> events = Histories.of(stack, workflowId);
    ev.note(when + ": history " + events.size() + " events, pay updates accepted " + acceptedPays(events)
        + ", workflow tasks timed out " + Histories.count(events, EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)
        + ", failed " + Histories.count(events, EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) + "; " + types(events));
    return events;
  }

  private static String status(String orderId) {
    return stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId);
  }

  private static String row(String orderId) {
    return stack.sql.text("SELECT status || ' v' || version FROM orders WHERE order_id = ?", orderId);
  }

  private static String reservation(String orderId) {
    return stack.sql.text("SELECT r.status FROM reservation r JOIN orders o ON o.reservation_key = r.reservation_key"
        + " WHERE o.order_id = ?", orderId);
  }

  /** Rows of one order in the channel's ledger (charges, refunds). */
  private static int ledgerRows(String orderId) {
    int n = 0;
    for (var r : stack.channel.get("/statement").body().path("rows")) {
      if (orderId.equals(r.path("merchant_order").asText())) n++;
    }
    return n;
  }

  private static long stats(String counter) {
    return stack.channel.get("/stats").body().path(counter).asLong(0);
  }

  /** The update ids of the accepted pay updates, in order. */
  private static List<String> acceptedPays(List<HistoryEvent> events) {
    return events.stream().filter(e -> e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
        .map(e -> e.getWorkflowExecutionUpdateAcceptedEventAttributes().getAcceptedRequest().getMeta().getUpdateId())
        .filter(u -> u.startsWith("pay")).toList();
  }

  /** The history's event types, shortened, in order. */
  private static String types(List<HistoryEvent> events) {
    return events.stream().map(e -> e.getEventType().name().replace("EVENT_TYPE_", "")
        .replace("WORKFLOW_EXECUTION_", "WE_").replace("WORKFLOW_TASK_", "WT_")).collect(Collectors.joining(" "));
  }

  /** A pay with an Idempotency-Key, as a buyer's client sends it. */
  private static HttpResponse<String> pay(HttpJson buyer, String orderId, String idempotencyKey) {
    HttpRequest request = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + "/orders/" + orderId + "/pay"))
        .header("Authorization", "Bearer " + buyer.token()).header("Content-Type", "application/json")
        .header("Idempotency-Key", idempotencyKey).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.noBody()).build();
    try {
      return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();
}
