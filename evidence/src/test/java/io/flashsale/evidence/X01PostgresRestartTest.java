package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * PostgreSQL's postmaster is SIGKILLed in the middle of a sale (buyers creating and paying)
 * and started again on the same data directory and port after an outage of about 8 s. Every
 * answer a buyer gets is a correct business answer or a 503 with a JSON error code (never a 500,
 * never a SOLD_OUT: the stock outlasts the crowd); the buyers retry their 503s with the same
 * request key and Idempotency-Key, the workflows retry their database steps (some step's attempt
 * in the history is 2 or more), and afterwards every
 * order is PAID once: one charge, one PAID transition, one event each, stock conserved, reconcile
 * clean.
 */
class X01PostgresRestartTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("X-01", "PostgreSQL SIGKILL + restart mid-sale: 503s, then every order converges");

  private static final String SKU = "sku-x01";
  private static final int BUYERS = 16;
  private static final int STOCK = 40;
  private static final long OUTAGE_MS = 8_000;

  /** One answer a buyer got: what it asked, the HTTP status and the code or status it carried. */
  private record Answer(String call, int status, String code, String raw) {
    String kind() {
      return call + " " + status + " " + code;
    }
  }

  private static final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static HttpResponse<String> post(String token, String path, String body, String idempotencyKey)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + path))
        .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + token)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (idempotencyKey != null) b.header("Idempotency-Key", idempotencyKey);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Sends until the answer is not a 503 (at most about 120 s); every answer is recorded. */
  private static HttpResponse<String> untilNot503(String call, String token, String path, String body, String key)
      throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (true) {
      HttpResponse<String> r = post(token, path, body, key);
      var json = r.body().isBlank() ? null : HttpJson.JSON.readTree(r.body());
      String code = json == null ? "-" : json.has("code") ? json.path("code").asText()
          : json.has("outcome") && !json.path("outcome").isNull() ? json.path("outcome").asText() : json.path("status").asText();
      answers.add(new Answer(call, r.statusCode(), code, r.body()));
      if (r.statusCode() != 503 || System.currentTimeMillis() > deadline) return r;
      Thread.sleep(500);
    }
  }

  /**
   * A buyer: create one unit with its request key, then pay it with an Idempotency-Key. Every
   * other buyer's charge reply is delayed, so pays are in flight (their answer step waiting) when
   * PostgreSQL dies.
   */
  private static String[] buy(int i, String token) throws Exception {
    String body = HttpJson.JSON.writeValueAsString(Buyers.order("x01-" + i, SKU, 1));
    HttpResponse<String> created = untilNot503("create", token, "/orders", body, null);
    // 200 REPLAY: an earlier try made the order, its answer was lost to the outage
    if (created.statusCode() != 201 && created.statusCode() != 200) return new String[] {null, created.body(), null};
    String id = HttpJson.JSON.readTree(created.body()).path("order_id").asText();
    if (i % 2 == 0) Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", 2_500));
    HttpResponse<String> paid = untilNot503("pay", token, "/orders/" + id + "/pay", "", "x01-pay-" + i);
    return new String[] {id, created.body(), paid.body()};
  }

  /**
   * The highest attempt of any database step in a run: a local step's marker carries its attempt,
   * an activity task's start event its attempt (the server counts those).
   */
  private static int maxStepAttempt(String workflowId) {
    int max = 1;
    for (var e : Histories.of(stack, workflowId)) {
      if (e.getEventType() == io.temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
        max = Math.max(max, e.getActivityTaskStartedEventAttributes().getAttempt());
      } else if (e.getEventType() == io.temporal.api.enums.v1.EventType.EVENT_TYPE_MARKER_RECORDED
          && e.getMarkerRecordedEventAttributes().getMarkerName().equals("LocalActivity")) {
        var meta = e.getMarkerRecordedEventAttributes().getDetailsMap().get("meta");
        if (meta == null) continue;
        try {
          max = Math.max(max, HttpJson.JSON.readTree(meta.getPayloads(0).getData().toStringUtf8()).path("atpt").asInt(1));
        } catch (java.io.IOException unreadable) {
          throw new AssertionError("unreadable local activity marker " + e.getEventId(), unreadable);
        }
      }
    }
    return max;
  }

  @Test
  void postgresKilledAndRestartedMidSale() throws Exception {
    stack.sku(SKU, STOCK, 3);
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < BUYERS; i++) tokens.add(stack.api.login("t1", "user-x01-" + i).token());
    PostgresProcess pg = PostgresProcess.of(stack);
    ev.note("postmaster pid " + pg.pid() + ", options " + String.join(" ", pg.options()));

    ExecutorService crowd = Executors.newFixedThreadPool(8);
    List<Future<String[]>> buyers = new ArrayList<>();
    long start = System.currentTimeMillis();
    for (int i = 0; i < BUYERS; i++) {
      int k = i;
      buyers.add(crowd.submit(() -> {
        Thread.sleep(k * 400L); // the crowd arrives over about 6 s: before, during and after the kill
        return buy(k, tokens.get(k));
      }));
    }
    // commits acknowledged right up to the kill must survive it: a writer of its own, one row per commit
    java.util.concurrent.atomic.AtomicLong acknowledged = new java.util.concurrent.atomic.AtomicLong();
    stack.db().inTx(c -> c.createStatement().execute("CREATE TABLE x01_ack (n bigint PRIMARY KEY)"));
    Thread writer = new Thread(() -> {
      try (java.sql.Connection c = java.sql.DriverManager.getConnection(stack.wiring.jdbcUrl());
          java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO x01_ack VALUES (?)")) {
        for (long n = 1; ; n++) {
          ps.setLong(1, n);
          ps.executeUpdate(); // autocommit: returns once the commit is acknowledged
          acknowledged.set(n);
        }
      } catch (java.sql.SQLException expected) {
        // the kill ends it
      }
    }, "x01-ack-writer");
    writer.start();
    Thread.sleep(1_500);
    long killed = pg.killPostmaster(30_000);
    long down = System.currentTimeMillis();
    ev.note("SIGKILL of postmaster " + killed + " at +" + (down - start) + " ms; its backends and helpers are gone");
    Thread.sleep(OUTAGE_MS);
    long restarted = pg.restart(60_000);
    ev.note("PostgreSQL started again (pid " + restarted + ", same data directory and port) after "
        + (System.currentTimeMillis() - down) + " ms");
    ev.check(restarted != killed, "a new postmaster runs on the same data directory");
    writer.join(10_000);
    long kept = stack.sql.count("SELECT coalesce(max(n), 0) FROM x01_ack");
    ev.note("commits acknowledged to a writer before the kill: " + acknowledged.get() + "; kept after the restart: " + kept);
    ev.check(acknowledged.get() > 0 && kept >= acknowledged.get(),
        "every commit acknowledged before the kill survived it (" + kept + " >= " + acknowledged.get() + ")");

    List<String[]> outcomes = new ArrayList<>();
    for (Future<String[]> f : buyers) outcomes.add(f.get(300, java.util.concurrent.TimeUnit.SECONDS));
    crowd.shutdown();
    ev.note("the crowd finished " + (System.currentTimeMillis() - start) + " ms after it started");

    Map<String, Integer> kinds = new TreeMap<>();
    for (Answer a : answers) kinds.merge(a.kind(), 1, Integer::sum);
    ev.note("answers " + kinds);
    Set<String> allowedCreate = Set.of("201 CREATED", "200 REPLAY");
    Set<String> allowedPay = Set.of("200 PAID", "200 UNKNOWN");
    Set<String> allowed503 = Set.of("DATABASE_UNAVAILABLE", "ENGINE_UNAVAILABLE", "OVERLOADED");
    List<Answer> wrong = new ArrayList<>();
    for (Answer a : answers) {
      String s = a.status() + " " + a.code();
      boolean ok = a.status() == 503 ? allowed503.contains(a.code())
          : (a.call().equals("create") ? allowedCreate : allowedPay).contains(s);
      if (!ok) wrong.add(a);
    }
    ev.check(wrong.isEmpty(), "every answer is a business answer (201 CREATED, 200 REPLAY, 200 PAID/UNKNOWN) or a 503 with a"
        + " JSON error code: no 500, no SOLD_OUT, no 4xx" + (wrong.isEmpty() ? "" : "; wrong: " + wrong));
    ev.check(answers.stream().anyMatch(a -> a.status() == 503),
        "the outage was seen by the buyers (some 503s)");

    List<String> ids = new ArrayList<>();
    for (String[] o : outcomes) if (o[0] != null) ids.add(o[0]);
    ev.equal(BUYERS, ids.size(), "every buyer got its order (201) after retrying with the same request key");
    ev.equal((long) BUYERS, (long) ids.stream().distinct().count(), "one order per buyer");
    for (int i = 0; i < BUYERS; i++) {
      String key = "x01-" + i;
      // a replay carries the first answer's order fields: compared without the outcome
      List<String> bodies = answers.stream().filter(a -> a.call().equals("create") && (a.status() == 201 || a.status() == 200))
          .map(a -> a.raw().replace("{\"outcome\":\"REPLAY\",", "{\"outcome\":\"CREATED\",")).filter(r -> r.contains("\"request_key\":\"" + key + "\"")).distinct().toList();
      if (bodies.size() > 1) ev.check(false, key + ": its 201/200 answers differ: " + bodies);
    }
    ev.equal((long) BUYERS, stack.sql.count("SELECT count(*) FROM orders WHERE request_key LIKE 'x01-%'"),
        "one order row per request key");

    stack.awaitNothingPending(120_000);
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE request_key LIKE 'x01-%'"
        + " AND status = 'PAID'") == BUYERS, 60_000, "not every order PAID");
    ev.equal(Map.of("PAID", BUYERS), stack.sql.histogram("SELECT status FROM orders WHERE request_key LIKE 'x01-%'"),
        "every order converged to PAID");
    for (String id : ids) {
      ev.check(stack.sql.count("SELECT count(*) FROM order_transition WHERE order_id = ? AND to_status = 'PAID'", id) == 1
          && stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id) == 1
          && "CHARGED".equals(stack.channel.get("/charges/" + id).text("status"))
          && Buyers.chargeRequests(stack.channel, id) == 1,
          id + ": one PAID transition, one event, one charge request, CHARGED");
    }
    Map<Integer, Integer> attempts = new TreeMap<>();
    for (String wf : stack.sql.column("SELECT workflow_id FROM orders WHERE request_key LIKE 'x01-%'")) {
      attempts.merge(maxStepAttempt(wf), 1, Integer::sum);
    }
    ev.note("runs by the highest attempt of a database step (1: never retried) " + attempts);
    // the buyers' pays are in flight (their charge replies delayed) when PostgreSQL dies: a step that
    // met the outage must have been retried by the workflow, not failed the order nor skipped
    ev.check(attempts.keySet().stream().anyMatch(a -> a >= 2),
        "a database step that met the outage was retried (some run's highest attempt >= 2): " + attempts);
    long confirmed = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE tenant = 't1' AND sku = ?"
        + " AND status = 'CONFIRMED'", SKU);
    long held = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE tenant = 't1' AND sku = ?"
        + " AND status = 'HELD'", SKU);
    int remaining = stack.sql.remaining(SKU);
    ev.note("stock " + STOCK + ": remaining " + remaining + ", confirmed " + confirmed + ", held " + held);
    ev.equal((long) BUYERS, confirmed, "one confirmed unit per PAID order");
    ev.equal((long) STOCK, remaining + confirmed + held, "conservation: remaining + confirmed + held = total");
    stack.checkReconcileClean(ev, "reconcile clean after the restart");
  }
}
