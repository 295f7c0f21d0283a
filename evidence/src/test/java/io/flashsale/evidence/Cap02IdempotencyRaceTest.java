package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
 * CAP-02 and CAP-04: idempotency under races. Four concurrent creates with one key and one payload
 * meet in one workflow: one answers 201 CREATED, the other three 200 REPLAY (with
 * Idempotent-Replayed: true), all with the same order fields; stock is taken once (2 units). Same
 * key with another payload: 422, again on a retry. A mixed race (same key, two payloads) never
 * creates two orders: every request that sent the stored payload gets that order (201 for the one
 * that made it, 200 REPLAY for the others), and every one that sent the other payload gets 422.
 * Concurrent cancels of one order release its units once. A retry after the order moved on, and
 * after its workflow closed, still gets the first answer's order fields as 200 REPLAY, answered
 * from the database: no new run of the workflow is started. A pay with an Idempotency-Key, retried
 * after the order's run closed and again once a late notice started a newer run that never saw the
 * key, gets the first answer's status and body byte for byte (pay_answer); another key gets 409
 * REJECTED; one charge.
 */
class Cap02IdempotencyRaceTest {
  // a short late-notice window, so the cancelled order's workflow closes within the experiment
  @RegisterExtension static final Stack stack = new Stack().with("orders.lateNoticeWindow", "3s");
  @RegisterExtension static final Evidence ev = new Evidence("CAP-02", "idempotency races; concurrent cancels (CAP-04)");

  @Test
  void sameKeyRacesMeetInOneOrder() throws Exception {
    stack.sku("sku-cap02", 10, 10);
    HttpJson buyer = stack.api.login("t1", "user-cap02");
    // a 503 (no answer in time, or overloaded) is sent again with the same request key, as a client would
    List<Buyers.Settled> sameAnswers = race(4, i -> Buyers.retrying503(() -> Buyers.create(buyer, "cap02-k1", "sku-cap02", 2)));
    List<HttpJson.Reply> same = replies(sameAnswers);
    Map<String, Integer> outcomes = outcomes(same);
    ev.note("4 same-key creates " + outcomes + "; " + Buyers.retriesNote(sameAnswers));
    ev.equal(createdOnce(sameAnswers, 4), outcomes, "one answers 201 CREATED, three 200 REPLAY");
    boolean createdAnswered = same.stream().anyMatch(r -> r.status() == 201);
    HttpJson.Reply createdOne = same.stream().filter(r -> r.status() == 201).findFirst()
        .orElseGet(() -> same.get(0)); // its maker's answer was a 503: any answer carries its fields
    ev.check(same.stream().filter(r -> r.status() == 200).allMatch(r -> "true".equals(r.header("Idempotent-Replayed"))),
        "each REPLAY carries Idempotent-Replayed: true");
    ev.check(!createdAnswered || createdOne.header("Idempotent-Replayed") == null, "the CREATED answer does not");
    ev.check(same.stream().allMatch(r -> sameOrderFields(r, createdOne)),
        "all four carry the same order fields (only the outcome differs)");
    ev.equal(1L, same.stream().map(r -> r.text("order_id")).distinct().count(), "all four name the same order");
    ev.equal(8, stack.sql.remaining("sku-cap02"), "stock taken once: 10 − 2");
    HttpJson.Reply again = createRetrying503(buyer, "cap02-k1", "sku-cap02", 2);
    ev.check(again.status() == 200 && "REPLAY".equals(again.text("outcome")) && sameOrderFields(again, createdOne),
        "a later retry: 200 REPLAY with the same order fields (" + again.status() + ")");

    HttpJson.Reply other = createRetrying503(buyer, "cap02-k1", "sku-cap02", 1);
    ev.check(other.status() == 422 && "KEY_REUSED".equals(other.text("outcome")), "same key, other payload → 422");
    HttpJson.Reply otherAgain = createRetrying503(buyer, "cap02-k1", "sku-cap02", 1);
    ev.check(otherAgain.status() == 422 && "KEY_REUSED".equals(otherAgain.text("outcome")), "and again 422 on its retry");

    List<Buyers.Settled> mixedAnswers =
        race(6, i -> Buyers.retrying503(() -> Buyers.create(buyer, "cap02-k2", "sku-cap02", mixedQuantity(i))));
    List<HttpJson.Reply> mixed = replies(mixedAnswers);
    ev.note("mixed race on one key " + outcomes(mixed) + "; " + Buyers.retriesNote(mixedAnswers));
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM orders WHERE request_key = 'cap02-k2'"), "one order for the key");
    List<HttpJson.Reply> created = mixed.stream().filter(r -> r.status() == 201 || r.status() == 200).toList();
    ev.check(mixed.stream().allMatch(r -> r.status() == 201 || r.status() == 200 || r.status() == 422),
        "each is 201 / 200 REPLAY (the winning payload) or 422 KEY_REUSED (the other)");
    long made = mixed.stream().filter(r -> r.status() == 201).count();
    boolean makerRetried = made == 0 && mixedAnswers.stream().anyMatch(a -> a.retries() > 0 && a.status() == 200);
    if (makerRetried) ev.note("the call that made the order was answered 503; its retry found the order: 200 REPLAY");
    ev.check(made == 1 || makerRetried, "one of them made the order: 201 CREATED (" + made + ")");
    ev.check(!created.isEmpty() && created.stream().allMatch(r -> sameOrderFields(r, created.get(0))),
        "the " + created.size() + " answers with the order carry one order's fields");
    int winner = created.get(0).body().path("quantity").asInt();
    ev.check(mixed.stream().allMatch(r -> r.status() != 422 || r.body().path("quantity").isMissingNode()),
        "the 422s carry no order");
    ev.equal(3L, (long) created.size(), "3 of the 6 share the winning payload (quantity " + winner + ")");
    // each answer against the payload its own request sent: the stored order's payload won
    int stored = (int) stack.sql.count("SELECT quantity FROM orders WHERE request_key = 'cap02-k2'");
    ev.equal(stored, winner, "the 201s describe the stored order (quantity " + stored + ")");
    List<String> byRequest = new ArrayList<>();
    for (int i = 0; i < mixed.size(); i++) {
      int sent = mixedQuantity(i);
      HttpJson.Reply r = mixed.get(i);
      byRequest.add("q" + sent + "→" + r.status() + " " + r.text("outcome"));
      if (sent == stored) {
        ev.check((r.status() == 201 || r.status() == 200) && r.body().path("quantity").asInt() == sent
                && r.text("order_id").equals(created.get(0).text("order_id")),
            "request " + i + " sent the winning payload (quantity " + sent + "): 201 or 200 REPLAY with that order");
      } else {
        ev.check(r.status() == 422 && "KEY_REUSED".equals(r.text("outcome")),
            "request " + i + " sent the losing payload (quantity " + sent + "): 422 KEY_REUSED");
      }
    }
    ev.note("mixed race by request " + byRequest);

    // CAP-04: concurrent cancels
    int before = stack.sql.remaining("sku-cap02");
    String id = same.get(0).text("order_id");
    // each cancel its own Idempotency-Key: a 503 sent again with it gets the answer of the cancel the
    // engine took, if it took it
    List<Buyers.Settled> cancelAnswers =
        race(5, i -> Buyers.retrying503(() -> Buyers.cancel(buyer, id, "cap02-cancel-" + i)));
    List<HttpJson.Reply> cancels = replies(cancelAnswers);
    Map<String, Integer> c = outcomes(cancels);
    ev.note("5 concurrent cancels " + c + "; " + Buyers.retriesNote(cancelAnswers));
    ev.equal(Map.of("200 CANCELLED", 1, "200 REPLAY_CANCEL", 4), c, "1 CANCELLED + 4 REPLAY_CANCEL");
    ev.equal(before + 2, stack.sql.remaining("sku-cap02"), "units restored once (+2)");

    // the original answer does not move with the order, nor go with its workflow
    HttpJson.Reply afterCancel = createRetrying503(buyer, "cap02-k1", "sku-cap02", 2);
    ev.check(afterCancel.status() == 200 && "REPLAY".equals(afterCancel.text("outcome"))
            && sameOrderFields(afterCancel, createdOne),
        "a retry of the cancelled order's create: 200 REPLAY with the first answer's fields (CREATED v1)");
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", id);
    stack.awaitTrue(() -> !"RUNNING".equals(stack.workflowStatus(workflowId)), 60_000, "the workflow did not close");
    String closedRun = stack.latestRunId(workflowId);
    ev.note("workflow of " + id + " " + stack.workflowStatus(workflowId) + " run " + closedRun);
    HttpJson.Reply afterClose = createRetrying503(buyer, "cap02-k1", "sku-cap02", 2);
    ev.check(afterClose.status() == 200 && "REPLAY".equals(afterClose.text("outcome"))
            && "true".equals(afterClose.header("Idempotent-Replayed")) && sameOrderFields(afterClose, createdOne),
        "a retry after its workflow closed: 200 REPLAY with the first answer's fields (" + afterClose.status() + ")");
    HttpJson.Reply afterCloseOther = createRetrying503(buyer, "cap02-k1", "sku-cap02", 1);
    ev.check(afterCloseOther.status() == 422 && "KEY_REUSED".equals(afterCloseOther.text("outcome")),
        "and another payload after the close: 422 KEY_REUSED (" + afterCloseOther.status() + ")");
    ev.equal(closedRun, stack.latestRunId(workflowId), "the retries started no new run: the latest run is the closed one");
    ev.check(!"RUNNING".equals(stack.workflowStatus(workflowId)), "and no run of the order is open");
    ev.equal("CANCELLED", buyer.get("/orders/" + id).text("status"), "GET shows where the order is: CANCELLED");
    ev.equal(before + 2, stack.sql.remaining("sku-cap02"), "the retries took no stock");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM orders WHERE request_key = 'cap02-k1'"), "one order for the key");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  @Test
  void aKeyedPayRetriedAfterItsRunClosedGetsItsFirstAnswer() throws Exception {
    stack.sku("sku-cap02-pay", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-cap02-pay");
    String id = Buyers.create(buyer, "cap02-pay", "sku-cap02-pay", 1).text("order_id");
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", id);
    HttpResponse<String> first = pay(buyer, id, "pay-1");
    ev.note("keyed pay of " + id + ": " + first.statusCode() + " " + first.body());
    ev.check(first.statusCode() == 200 && first.body().contains("\"PAID\""), "the keyed pay is 200 PAID");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM pay_answer WHERE order_id = ? AND idempotency_key = 'pay-1'"
        + " AND http_status = 200 AND status = 'PAID'", id), "its answer is recorded in pay_answer");

    stack.awaitTrue(() -> !"RUNNING".equals(stack.workflowStatus(workflowId)), 60_000, "the workflow did not close");
    String closedRun = stack.latestRunId(workflowId);
    HttpResponse<String> afterClose = pay(buyer, id, "pay-1");
    ev.note("after the run closed (" + stack.workflowStatus(workflowId) + "): " + afterClose.statusCode() + " "
        + afterClose.body());
    ev.equal(first.statusCode(), afterClose.statusCode(), "the retry after the run closed: the first status");
    ev.equal(first.body(), afterClose.body(), "and the first body, byte for byte");

    // a late notice of another charge starts a newer run of the order, which never saw pay-1
    HttpJson.Reply late = stack.callback(Map.of("notify_id", "ntf-cap02-late", "merchant_order", id, "kind", "CHARGED",
        "amount", 1990, "txn", "cap02-late-txn"));
    ev.check(late.status() == 200, "the late notice is accepted (" + late.status() + " " + late.raw() + ")");
    stack.awaitTrue(() -> !closedRun.equals(stack.latestRunId(workflowId)), 30_000, "no newer run started");
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM payment_notification WHERE notify_id = 'ntf-cap02-late'"
        + " AND effect IS NOT NULL") == 1, 30_000, "the late notice was not applied");
    ev.note("late notice effect " + stack.sql.text(
        "SELECT effect FROM payment_notification WHERE notify_id = 'ntf-cap02-late'") + ", newer run "
        + stack.latestRunId(workflowId) + " " + stack.workflowStatus(workflowId));
    HttpResponse<String> newerRun = pay(buyer, id, "pay-1");
    ev.note("to the newer run: " + newerRun.statusCode() + " " + newerRun.body());
    ev.equal(first.statusCode(), newerRun.statusCode(), "the retry to the newer run: the first status");
    ev.equal(first.body(), newerRun.body(), "and the first body, byte for byte (before pay_answer: 409 REJECTED)");

    HttpResponse<String> other = pay(buyer, id, "pay-2");
    ev.check(other.statusCode() == 409 && other.body().contains("\"REJECTED\"") && other.body().contains("\"PAID\""),
        "another key is another pay: 409 REJECTED PAID (" + other.body() + ")");
    HttpResponse<String> unkeyed = pay(buyer, id, null);
    ev.check(unkeyed.statusCode() == 409 && unkeyed.body().contains("\"REJECTED\""), "no key: 409 REJECTED");
    HttpJson stranger = stack.api.login("t1", "user-cap02-other");
    ev.equal(404, pay(stranger, id, "pay-1").statusCode(), "another principal with the same key: 404");
    ev.equal(1, Buyers.chargeRequests(stack.channel, id), "one charge request at the channel");
    ev.equal("PAID", buyer.get("/orders/" + id).text("status"), "GET shows the order PAID");
  }

  private static HttpResponse<String> pay(HttpJson client, String orderId, String idempotencyKey) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + "/orders/" + orderId + "/pay"))
        .header("Authorization", "Bearer " + client.token()).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.noBody());
    if (idempotencyKey != null) b.header("Idempotency-Key", idempotencyKey);
    return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The same answer apart from its outcome: every order field of the body (the create-time order). */
  private static boolean sameOrderFields(HttpJson.Reply r, HttpJson.Reply first) {
    com.fasterxml.jackson.databind.node.ObjectNode a = r.body().deepCopy();
    com.fasterxml.jackson.databind.node.ObjectNode b = first.body().deepCopy();
    a.remove("outcome");
    b.remove("outcome");
    return a.equals(b) && a.has("order_id");
  }

  /** The mixed race's payloads: requests 0, 2, 4 ask for one unit, 1, 3, 5 for two. */
  private static int mixedQuantity(int i) {
    return i % 2 == 0 ? 1 : 2;
  }

  /** A create whose 503s are sent again with the same request key. */
  private static HttpJson.Reply createRetrying503(HttpJson buyer, String key, String sku, int quantity) throws Exception {
    return Buyers.retrying503(() -> Buyers.create(buyer, key, sku, quantity)).reply();
  }

  /**
   * What n creates with one key and body answer: one 201 CREATED, the others 200 REPLAY. Where no
   * call got the 201 and one was sent again after a 503, the call that made the order was answered
   * 503 (the engine's deadline passed as it created it) and its retry found the order: n REPLAYs.
   */
  private static Map<String, Integer> createdOnce(List<Buyers.Settled> answers, int n) {
    boolean created = answers.stream().anyMatch(a -> a.status() == 201);
    boolean retried = answers.stream().anyMatch(a -> a.retries() > 0 && a.status() == 200);
    if (!created && retried) {
      ev.note("the call that made the order was answered 503; its retry found the order: 200 REPLAY");
      return Map.of("200 REPLAY", n);
    }
    return Map.of("201 CREATED", 1, "200 REPLAY", n - 1);
  }

  private static List<HttpJson.Reply> replies(List<Buyers.Settled> answers) {
    return answers.stream().map(Buyers.Settled::reply).toList();
  }

  private interface Call<T> {
    T run(int i) throws Exception;
  }

  private static <T> List<T> race(int n, Call<T> call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<T>> fs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int k = i;
      fs.add(pool.submit(() -> {
        go.await();
        return call.run(k);
      }));
    }
    go.countDown();
    List<T> out = new ArrayList<>();
    for (Future<T> f : fs) out.add(f.get());
    pool.shutdown();
    return out;
  }

  private static Map<String, Integer> outcomes(List<HttpJson.Reply> replies) {
    Map<String, Integer> m = new TreeMap<>();
    for (HttpJson.Reply r : replies) m.merge(r.status() + " " + r.text("outcome"), 1, Integer::sum);
    return m;
  }
}
