package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * X-04: two API + worker instances on one PostgreSQL and one Temporal server. Instance A is the
 * test's stack; instance B is a second {@code server} in its own JVM, with the production wiring
 * (embedded: false, engine external) pointed at A's database, Temporal and channel.
 * <ul>
 *   <li>a crowd split across both gets exactly the stock, never more;
 *   <li>the same request key sent to both at once meets in one workflow: one order, one answer;
 *   <li>B's worker serves the shared task queue: some history names it (its identity, pid@host) as
 *       the worker of a workflow or activity task;
 *   <li>each instance's sold-out view turns to "sold out" after a sale on the other (how soon is
 *       printed), and once a unit comes back no probe sent later than the view's bound after that is
 *       refused: the bound is what the view guarantees, so it is the only time asserted.
 * </ul>
 * The dev server only: the in-memory engine lives inside A's JVM and is not shared the way a
 * Temporal cluster is.
 */
@Tag("dev-server-only")
class X04TwoInstancesTest {
  private static final int STOCK = 30;
  private static final int CROWD = 90;
  /** The view's bound (stockView.bound, the default): the oldest state it answers SOLD_OUT from. */
  private static final long BOUND_MS = 2_000;
  /** How long the probes wait for a view to follow: a deadline for a condition, not a speed bound. */
  private static final long FOLLOW_DEADLINE_MS = 60_000;

  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("X-04", "two instances: exact stock, one workflow per key, both workers ran tasks, each view follows the other");

  @Test
  void twoInstancesShareOneSale() throws Exception {
    int apiPort = Stack.freePortForChild();
    int adminPort = Stack.freePortForChild();
    Map<String, String> props = new LinkedHashMap<>(stack.workerProperties());
    props.put("dw.server.applicationConnectors[0].port", String.valueOf(apiPort));
    props.put("dw.server.adminConnectors[0].port", String.valueOf(adminPort));
    props.put("dw.auth.secret", "x04-second-instance-token-key-0123456789abcdef"); // its own tokens
    props.put("dw.auth.devLogin", "true");
    props.put("dw.auth.devLoginOutsideLocalDefault", "true"); // a test instance: its tokens come from dev login
    props.put("dw.channel.callbackSecret", stack.wiring.callbackSecret());
    props.put("dw.consumer.enabled", "false"); // one consumer (A's); B's relay would have no consumer
    props.put("dw.relay.enabled", "false");
    props.put("dw.seed.enabled", "false");
    props.put("dw.warmUp.duration", "3s"); // an instance that joins a sale warms up before it says up
    try (ChildJvm b = ChildJvm.start("x04-instance-b", props, "server", "embedded.yml")) {
      b.awaitLog("=== flashsale is up ===", 120_000);
      warmedUpBeforeUp(b, adminPort);
      HttpJson apiB = new HttpJson("http://127.0.0.1:" + apiPort, null);
      HttpJson adminB = new HttpJson("http://127.0.0.1:" + adminPort, Stack.CHILD_ADMIN_TOKEN);
      // B's admin port is no local default's: everything but its liveness and health checks needs the credential
      HttpJson stranger = new HttpJson("http://127.0.0.1:" + adminPort, null);
      HttpJson.Reply refused = stranger.get("/metrics");
      ev.check(Problems.is(refused, 401, "ADMIN_UNAUTHORIZED"),
          "B's admin /metrics without the admin credential → " + Problems.shown(refused, 401, "ADMIN_UNAUTHORIZED"));
      ev.equal("Bearer realm=\"flashsale-admin\"", refused.header("WWW-Authenticate"), "the admin port's challenge");
      ev.equal(401, stranger.post("/tasks/reconcile", null).status(), "B's reconcile task without it → 401");
      ev.equal(401, stranger.as("a-guessed-token").get("/metrics/prometheus").status(), "with a guessed one → 401");
      ev.equal(200, stranger.get("/ping").status(), "B's /ping stays open (liveness)");
      ev.equal(200, adminB.get("/metrics").status(), "with the credential → 200");
      ev.note("instance A: API " + stack.wiring.apiPort() + " (this JVM); instance B: API " + apiPort + " (pid " + b.pid() + ")");
      // B is no local default: its dev login is on only because a second setting acknowledges it, and says so
      ev.check(b.logContains("DEV LOGIN IS ON OUTSIDE THE LOCAL DEFAULT"), "instance B's start log says dev login is on");
      ev.equal("true", apiB.post("/session", java.util.Map.of("tenant", "t1", "subject", "user-x04-dev")).text("dev_login"),
          "a session B issues says dev_login: true");
      crowdGetsExactlyTheStock(apiB);
      sameKeyOnBothMeetsInOneWorkflow(apiB);
      viewsFollowEachOtherWithinTheirBound(apiB, adminB);
      aRevocationOnAIsRefusedOnBWithinItsBound(apiB);
      instanceBsWorkerRanTasks(b.pid());
      stack.awaitNothingPending(60_000);
      stack.checkReconcileClean(ev, "reconcile clean with two instances");
    }
  }

  /**
   * B ran its warm-up before its banner: sold-out creates only (every answer 409), no order made,
   * and its warm-up health check healthy once up (docs/DESIGN.md §Warm from the first buyer).
   */
  private void warmedUpBeforeUp(ChildJvm b, int adminPort) throws Exception {
    // the banner prints what the warm-up did, so it is printed after the warm-up ended (the log's
    // lines go through an async appender: their order against the banner's is not the order of events)
    String log = b.log();
    String banner = log.substring(log.indexOf("=== flashsale is up ==="));
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("warm-up +(\\d+) sold-out creates from \\d+ buyers in [0-9.]+ s, answers by status \\{([^}]*)\\}").matcher(banner);
    ev.check(m.find(), "B's banner says what its warm-up did, so it warmed up before it said up");
    ev.note("B's warm-up: " + m.group(0));
    long sent = Long.parseLong(m.group(1));
    ev.check(sent > 0 && m.group(2).equals("409=" + sent), "every warm-up create was answered 409 SOLD_OUT: " + m.group(2));
    java.util.regex.Matcher engine = java.util.regex.Pattern
        .compile("; (\\d+) runs with no effect through the engine in [0-9.]+ s( \\(stopped[^)]*\\))?").matcher(banner);
    // at least one run answered proves the path; a later run past the 5 s bound on a loaded machine is noted
    ev.check(engine.find() && Long.parseLong(engine.group(1)) > 0,
        "B's warm-up ran the engine path too (echo runs and sold-out creates answered through update-with-start): "
            + (engine.find(0) ? engine.group(0) : "no such part in its banner"));
    if (engine.find(0) && engine.group(2) != null) ev.note("B's engine part stopped early: " + engine.group(2));
    java.util.regex.Matcher replays = java.util.regex.Pattern
        .compile("; (\\d+) order histories replayed in [0-9.]+ s( \\(stopped[^)]*\\))?").matcher(banner);
    ev.check(replays.find() && Long.parseLong(replays.group(1)) > 0 && replays.group(2) == null,
        "B's warm-up replayed the order workflow's recorded histories, none refused: "
            + (replays.find(0) ? replays.group(0) : "no such part in its banner"));
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders WHERE tenant = 'flashsale-warm-up'"), "the warm-up made no order");
    // its creates ran order workflows that found no stock and ended (visibility follows the engine: polled)
    Map<String, Long> warmUpRuns = orderRunsByStatus("order:flashsale-warm-up:");
    for (long until = System.currentTimeMillis() + 30_000; System.currentTimeMillis() < until
        && (warmUpRuns.isEmpty() || !warmUpRuns.keySet().stream().allMatch(st -> st.endsWith("COMPLETED")));) {
      Thread.sleep(200);
      warmUpRuns = orderRunsByStatus("order:flashsale-warm-up:");
    }
    ev.note("B's warm-up creates as the engine lists them: " + warmUpRuns);
    ev.check(!warmUpRuns.isEmpty() && warmUpRuns.keySet().stream().allMatch(st -> st.endsWith("COMPLETED")),
        "B's warm-up creates ran the order workflow, and each ended (SOLD_OUT, no row)");
    HttpJson.Reply health = new HttpJson("http://127.0.0.1:" + adminPort, null).get("/healthcheck");
    ev.check(health.body().path("warm-up").path("healthy").asBoolean(false),
        "B's warm-up health check is healthy once up: " + health.body().path("warm-up"));
  }

  /** The order runs whose workflow id starts so, counted by execution status. */
  private static Map<String, Long> orderRunsByStatus(String idPrefix) {
    Map<String, Long> byStatus = new java.util.TreeMap<>();
    com.google.protobuf.ByteString page = com.google.protobuf.ByteString.EMPTY;
    do {
      var r = stack.wiring.temporal().service().blockingStub().listWorkflowExecutions(
          io.temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest.newBuilder().setNamespace("default")
              .setQuery("WorkflowType = 'OrderWorkflow'").setPageSize(1000).setNextPageToken(page).build());
      for (var info : r.getExecutionsList()) {
        if (info.getExecution().getWorkflowId().startsWith(idPrefix)) byStatus.merge(info.getStatus().name(), 1L, Long::sum);
      }
      page = r.getNextPageToken();
    } while (!page.isEmpty());
    return byStatus;
  }

  /** CROWD buyers, each on A or B, for STOCK units: exactly STOCK orders, the rest SOLD_OUT. */
  private void crowdGetsExactlyTheStock(HttpJson apiB) throws Exception {
    stack.sku("sku-x04-crowd", STOCK, 1);
    List<Callable<String>> calls = new ArrayList<>();
    Map<String, Integer> byInstance = new ConcurrentHashMap<>();
    for (int i = 0; i < CROWD; i++) {
      boolean onB = i % 2 == 1;
      String subject = String.format("user-x04-%03d", i);
      calls.add(() -> {
        HttpJson buyer = (onB ? apiB : stack.api).login("t1", subject);
        HttpJson.Reply r = createAnswered(buyer, "x04-crowd-" + subject, "sku-x04-crowd", 1);
        String outcome = r.status() == 201 || (r.status() == 200 && "REPLAY".equals(code(r))) ? "CREATED" : r.status() + " " + code(r);
        byInstance.merge((onB ? "B " : "A ") + outcome, 1, Integer::sum);
        return outcome;
      });
    }
    Map<String, Integer> outcomes = new LinkedHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(32);
    try {
      for (Future<String> f : pool.invokeAll(calls)) outcomes.merge(f.get(), 1, Integer::sum);
    } finally {
      pool.shutdownNow();
    }
    ev.note("crowd of " + CROWD + " for " + STOCK + " units: " + outcomes + "; by instance " + new java.util.TreeMap<>(byInstance)
        + "; 503s sent again with the same key: " + retried503.get());
    ev.equal(STOCK, outcomes.getOrDefault("CREATED", 0), "exactly the stock was sold across both instances");
    ev.equal(CROWD - STOCK, outcomes.getOrDefault("409 SOLD_OUT", 0), "every other buyer got SOLD_OUT");
    // which instance sold how many is scheduling (B is a younger JVM); that B sells is asserted
    // below, on a unit that comes back. Here: each instance answered every buyer sent to it.
    for (String instance : List.of("A ", "B ")) {
      int answered = byInstance.entrySet().stream().filter(e -> e.getKey().startsWith(instance))
          .mapToInt(Map.Entry::getValue).sum();
      ev.equal(CROWD / 2, answered, "instance " + instance.trim() + " answered each of its half of the crowd");
    }
    ev.equal(0, stack.sql.remaining("sku-x04-crowd"), "remaining 0");
    ev.equal((long) STOCK, stack.sql.count("SELECT count(*) FROM orders WHERE sku = 'sku-x04-crowd'"
        + " AND status NOT IN ('CANCELLED', 'FAILED', 'REFUNDED')"), "no oversell: live orders = stock");
    ev.equal((long) STOCK, stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE sku = 'sku-x04-crowd'"
        + " AND status IN ('HELD', 'CONFIRMED')"), "conservation: held = total - remaining");
  }

  /** The same (subject, key) on both instances at once: one order id in both answers, one row, one run. */
  private void sameKeyOnBothMeetsInOneWorkflow(HttpJson apiB) throws Exception {
    stack.sku("sku-x04-dup", 50, 5);
    int pairs = 10;
    Set<String> mismatched = ConcurrentHashMap.newKeySet();
    List<Callable<Void>> calls = new ArrayList<>();
    for (int i = 0; i < pairs; i++) {
      String subject = String.format("user-x04-dup-%02d", i);
      String key = "x04-dup-" + i;
      calls.add(() -> {
        HttpJson onA = stack.api.login("t1", subject);
        HttpJson onB = apiB.login("t1", subject);
        var ra = java.util.concurrent.CompletableFuture.supplyAsync(() -> createAnswered(onA, key, "sku-x04-dup", 1));
        var rb = java.util.concurrent.CompletableFuture.supplyAsync(() -> createAnswered(onB, key, "sku-x04-dup", 1));
        HttpJson.Reply a = ra.get();
        HttpJson.Reply bReply = rb.get();
        // one of the pair made the order (201 CREATED), the other is its replay (200 REPLAY); a create
        // re-sent after a 503 may find its own order and be a replay too, so: never two 201s
        boolean answered = isCreateOrReplay(a) && isCreateOrReplay(bReply) && a.status() + bReply.status() <= 401;
        if (!answered || !a.text("order_id").equals(bReply.text("order_id"))) {
          mismatched.add(key + ": A " + a.status() + " " + a.text("order_id") + ", B " + bReply.status() + " " + bReply.text("order_id"));
        }
        return null;
      });
    }
    ExecutorService pool = Executors.newFixedThreadPool(pairs);
    try {
      for (Future<Void> f : pool.invokeAll(calls)) f.get();
    } finally {
      pool.shutdownNow();
    }
    ev.check(mismatched.isEmpty(), "the same key on both instances answers one 201 and 200 REPLAY (never two 201s) with one order id each time " + mismatched);
    ev.equal((long) pairs, stack.sql.count("SELECT count(*) FROM orders WHERE sku = 'sku-x04-dup'"), "one order row per key");
    ev.equal((long) pairs, stack.sql.count("SELECT count(DISTINCT workflow_id) FROM orders WHERE sku = 'sku-x04-dup'"),
        "one workflow per key");
    ev.equal((long) pairs, stack.sql.count("SELECT count(*) FROM reservation WHERE sku = 'sku-x04-dup'"), "one reservation per key");
    ev.equal(50 - pairs, stack.sql.remaining("sku-x04-dup"), "one unit per key taken");
  }

  /**
   * A sells the last unit: B's view must say "sold out" within its bound (its own metric shows the
   * answer came from the view, not the database). A unit comes back on A: B must sell it within the
   * bound, never refusing it from the view for longer.
   */
  private void viewsFollowEachOtherWithinTheirBound(HttpJson apiB, HttpJson adminB) throws Exception {
    stack.sku("sku-x04-view", 1, 5);
    HttpJson seller = stack.api.login("t1", "user-x04-view-a");
    HttpJson watcher = apiB.login("t1", "user-x04-view-b");
    long viewCountBefore = soldOutFromView(adminB);
    HttpJson.Reply last = createAnswered(seller, "x04-view-last", "sku-x04-view", 1);
    long soldAt = System.currentTimeMillis();
    ev.check(isCreateOrReplay(last), "A sells the last unit (201, or 200 REPLAY when a 503 had made it): " + last.status());
    String orderId = last.text("order_id");

    long viewSaidSoldOutAfter = -1;
    int probe = 0;
    List<String> notSoldOut = new ArrayList<>();
    while (System.currentTimeMillis() - soldAt < FOLLOW_DEADLINE_MS) {
      HttpJson.Reply r = Buyers.create(watcher, "x04-view-probe-" + probe++, "sku-x04-view", 1);
      if (r.status() == 503) continue; // not answered (the engine or database busy): no view answer either
      if (r.status() != 409 || !"SOLD_OUT".equals(code(r))) notSoldOut.add(r.status() + " " + code(r));
      if (soldOutFromView(adminB) > viewCountBefore) {
        viewSaidSoldOutAfter = System.currentTimeMillis() - soldAt;
        break;
      }
      Thread.sleep(50);
    }
    ev.check(notSoldOut.isEmpty(), "every probe on B after A sold the last unit got SOLD_OUT " + notSoldOut);
    ev.note("B's view answered SOLD_OUT " + viewSaidSoldOutAfter + " ms after A sold the last unit (bound " + BOUND_MS + " ms)");
    ev.check(viewSaidSoldOutAfter >= 0, "B's view learned the sale on A and answered SOLD_OUT itself");
    // the key that bought the last unit on A, retried on B while B answers SOLD_OUT from memory: its
    // order, never SOLD_OUT (B's caller view knows the seller has an order, or B reads the key)
    HttpJson.Reply retried = Buyers.create(apiB.login("t1", "user-x04-view-a"), "x04-view-last", "sku-x04-view", 1);
    ev.check(retried.status() == 200 && "REPLAY".equals(code(retried)) && orderId.equals(retried.text("order_id")),
        "the seller's key retried on B gets its order, 200 REPLAY: " + retried.status() + " " + code(retried));

    // the unit comes back on A: B must sell it within the bound
    ev.equal(200, Buyers.cancel(seller, orderId).status(), "A cancels: the unit comes back");
    stack.awaitTrue(() -> stack.sql.remaining("sku-x04-view") == 1, 10_000, "the unit never came back");
    // A refusal answered at T comes from state learned at T - bound or later (a full read's start, or
    // a notification); a probe sent more than the bound after the unit was back is answered later
    // still, so its state already holds the unit: refusing it breaks the bound, however slow the machine
    long backAt = System.currentTimeMillis();
    long soldAgainAfter = -1;
    List<String> refusedPastBound = new ArrayList<>();
    int refusedWithinBound = 0;
    while (System.currentTimeMillis() - backAt < FOLLOW_DEADLINE_MS) {
      long sentAfter = System.currentTimeMillis() - backAt;
      HttpJson.Reply r = Buyers.create(watcher, "x04-view-again-" + probe++, "sku-x04-view", 1);
      if (r.status() == 201) {
        soldAgainAfter = System.currentTimeMillis() - backAt;
        break;
      }
      if (r.status() == 503) {
        // not answered, but its workflow may have taken the unit after the API's deadline
        if (stack.sql.remaining("sku-x04-view") == 0) {
          soldAgainAfter = System.currentTimeMillis() - backAt;
          ev.note("the returned unit was taken by a probe answered 503 (" + code(r) + ")");
          break;
        }
        continue;
      }
      if (sentAfter > BOUND_MS) refusedPastBound.add("sent +" + sentAfter + " ms: " + r.status() + " " + code(r));
      else refusedWithinBound++;
      Thread.sleep(50);
    }
    ev.note("B sold the returned unit " + soldAgainAfter + " ms after it was back (bound " + BOUND_MS + " ms); "
        + refusedWithinBound + " probes sent within the bound were refused");
    ev.check(soldAgainAfter >= 0, "B sold the returned unit");
    ev.check(refusedPastBound.isEmpty(), "B refused no probe sent more than its bound (" + BOUND_MS
        + " ms) after the unit was back " + refusedPastBound);
    ev.equal(0, stack.sql.remaining("sku-x04-view"), "the returned unit was sold once");
  }

  /**
   * A principal revoked on A's admin port is refused on B within B's caller-view bound, and restored
   * likewise (for a token issued after the revocation; the one from before stays refused). An answer at T comes from a poll started at T - bound or later, or from the database,
   * so a request sent more than the bound after the change must see it, however slow the machine.
   */
  private void aRevocationOnAIsRefusedOnBWithinItsBound(HttpJson apiB) throws Exception {
    HttpJson onB = apiB.login("t1", "user-x04-revoked");
    ev.equal(200, onB.get("/orders").status(), "before the revocation B answers the principal");
    ev.equal(200, stack.admin.post("/tasks/revoke?tenant=t1&subject=user-x04-revoked", null).status(), "revoked on A");
    followedWithinTheBound(onB, 403, "REVOKED", "the revocation");
    // a token issued after the revocation is what an unrevoke lets in (the earlier ones stay refused)
    HttpJson after = apiB.login("t1", "user-x04-revoked");
    ev.equal(200, stack.admin.post("/tasks/unrevoke?tenant=t1&subject=user-x04-revoked", null).status(), "restored on A");
    followedWithinTheBound(after, 200, null, "the restore");
    HttpJson.Reply stale = onB.get("/orders");
    ev.check(Problems.is(stale, 401, "SESSION_ENDED"),
        "on B the token from before the revocation stays refused: 401 SESSION_ENDED (" + stale.status() + ")");
  }

  /** Probes B until it answers as A changed it; no probe sent more than the bound after the change may answer otherwise. */
  private void followedWithinTheBound(HttpJson onB, int status, String error, String what) throws Exception {
    long changedAt = System.currentTimeMillis();
    long followedAfter = -1;
    List<String> latePastBound = new ArrayList<>();
    while (System.currentTimeMillis() - changedAt < FOLLOW_DEADLINE_MS) {
      long sentAfter = System.currentTimeMillis() - changedAt;
      HttpJson.Reply r = onB.get("/orders");
      if (r.status() == status && (error == null || error.equals(r.text("code")))) {
        followedAfter = System.currentTimeMillis() - changedAt;
        break;
      }
      if (sentAfter > BOUND_MS) latePastBound.add("sent +" + sentAfter + " ms: " + r.status());
      Thread.sleep(20);
    }
    ev.note("B followed " + what + " on A " + followedAfter + " ms after (caller-view bound " + BOUND_MS + " ms)");
    ev.check(followedAfter >= 0, "B follows " + what + " on A (" + status + (error == null ? "" : " " + error) + ")");
    ev.check(latePastBound.isEmpty(), "no probe sent more than the bound after " + what + " missed it " + latePastBound);
  }

  /**
   * B's worker polls the same task queue as A's: some workflow or activity task of this sale's
   * orders was run by it, as the server recorded the worker's identity (the SDK's default, pid@host).
   */
  private void instanceBsWorkerRanTasks(long pidB) {
    String prefixB = pidB + "@";
    String prefixA = ProcessHandle.current().pid() + "@";
    Map<String, Integer> tasksBy = new java.util.TreeMap<>();
    for (String wf : stack.sql.column("SELECT workflow_id FROM orders WHERE sku LIKE 'sku-x04-%'")) {
      for (var e : Histories.of(stack, wf)) {
        String identity = switch (e.getEventType()) {
          case EVENT_TYPE_WORKFLOW_TASK_COMPLETED -> "workflow task " + e.getWorkflowTaskCompletedEventAttributes().getIdentity();
          case EVENT_TYPE_ACTIVITY_TASK_STARTED -> "activity task " + e.getActivityTaskStartedEventAttributes().getIdentity();
          default -> null;
        };
        if (identity == null) continue;
        String who = identity.contains(" " + prefixB) ? " by B" : identity.contains(" " + prefixA) ? " by A" : " by " + identity;
        tasksBy.merge(identity.substring(0, identity.indexOf(" task") + 5) + who, 1, Integer::sum);
      }
    }
    ev.note("tasks by worker (identity pid@host; A pid " + ProcessHandle.current().pid() + ", B pid " + pidB + ") " + tasksBy);
    ev.check(tasksBy.entrySet().stream().anyMatch(t -> t.getKey().endsWith(" by B") && t.getValue() > 0),
        "instance B's worker ran workflow or activity tasks of the sale");
  }

  /**
   * A create answered by the service: a 503 (busy engine or database, Retry-After) is sent again
   * with the same key, as the API asks; what is counted is the answer it ends with.
   */
  private static HttpJson.Reply createAnswered(HttpJson buyer, String key, String sku, int quantity) {
    long deadline = System.currentTimeMillis() + 180_000;
    while (true) {
      HttpJson.Reply r = Buyers.create(buyer, key, sku, quantity);
      if (r.status() != 503 || System.currentTimeMillis() > deadline) return r;
      retried503.incrementAndGet();
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return r;
      }
    }
  }

  private static boolean isCreateOrReplay(HttpJson.Reply r) {
    return r.status() == 201 && "CREATED".equals(r.text("outcome")) || r.status() == 200 && "REPLAY".equals(r.text("outcome"));
  }

  private static final java.util.concurrent.atomic.AtomicInteger retried503 = new java.util.concurrent.atomic.AtomicInteger();

  /** The stable code of a refusal: {@code outcome} for business answers, {@code error} otherwise. */
  private static String code(HttpJson.Reply r) {
    String outcome = r.text("outcome");
    return outcome != null ? outcome : r.text("code");
  }

  private static long soldOutFromView(HttpJson admin) {
    return admin.get("/metrics").body().path("counters").path("flashsale.gate.soldOutFromView").path("count").asLong();
  }
}
