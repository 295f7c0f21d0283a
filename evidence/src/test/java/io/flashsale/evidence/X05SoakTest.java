package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * a soak. {@value #DEFAULT_ORDERS} orders by default ({@code -Dsoak.orders=N} for longer,
 * {@code -Dsoak.seed=S} for another plan), each with a fault drawn from the seed up front: a
 * decline, a lost reply, a held request, duplicate or delayed (reordered) callbacks, no pay (it
 * expires), a cancel, or none. Meanwhile the workers (two child JVMs; the API JVM hosts none) are
 * SIGKILLed one at a time every few seconds and replaced, and PostgreSQL's postmaster is
 * SIGKILLed and restarted once. Buyers retry a 503 with the same key.
 *
 * <p>The stock is {@code 2/5} of the orders, so the sale sells out in the middle of the faults and
 * lives on the units that come back (declines, cancels, expiries). After the planned buyers,
 * closing buyers (no fault) keep coming, with the kills still running, until every order is final
 * and a create is answered SOLD_OUT: then nothing can come back, and exactly the stock is PAID.
 *
 * <p>Every answer is checked against an allow-list per request kind (login 200; create 201 CREATED,
 * 200 REPLAY, 409 SOLD_OUT; pay 200 PAID/FAILED/UNKNOWN; cancel 200 CANCELLED/REPLAY_CANCEL; the
 * channel's callbacks, through a recording forwarder, 200 accepted; and for all of them 503
 * OVERLOADED/ENGINE_UNAVAILABLE with Retry-After, or DATABASE_UNAVAILABLE once PostgreSQL was
 * killed); anything else fails the experiment, named. Sold out is counted only from 409 SOLD_OUT.
 *
 * <p>The kills go on until the clients are done and at least one came after the sell-out. At the
 * end: the sale sold out after the first fault (and so before the last), remaining 0, every
 * order is final, PAID = stock, stock conserved, one PAID transition and one event per PAID order,
 * at most one effect per notice, and reconcile finds mismatches=0 pending=0 drift=0. The figures
 * (orders/s, faults by kind, kills, when the stock ran out, transitions by cause) are in the output.
 *
 * <p>The dev server only: the in-memory engine never moves a dead worker's workflow tasks off its
 * sticky queue, so killing workers that host workflows only makes sense on a real server.
 */
@Tag("dev-server-only")
class X05SoakTest {
  static final int DEFAULT_ORDERS = 1_000;
  private static final int ORDERS = Integer.getInteger("soak.orders", DEFAULT_ORDERS);
  private static final long SEED = Long.getLong("soak.seed", 5);
  /** Well below the orders: even with the units that come back the sale sells out mid-run. */
  private static final int STOCK = ORDERS * 2 / 5;
  private static final int CLIENTS = 16;
  private static final long CHANNEL_TIMEOUT_MS = 1_500;
  private static final long WORKER_KILL_EVERY_MS = 5_000;
  private static final String SKU = "sku-x05";

  /** The callback recorder's port: the channel calls back only its configured notify URL, which is the recorder. */
  private static final int RECORDER_PORT = recorderPort();
  private static final String RECORDER_URL = "http://127.0.0.1:" + RECORDER_PORT + "/callbacks/payment";

  private static int recorderPort() {
    try {
      return Stack.freePortForChild();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @RegisterExtension static final Stack stack = new Stack().with("worker", false)
      .with("channel.notifyUrl", RECORDER_URL)
      .with("orders.reservationTtl", "30s")
      .with("orders.unknownFirstQuery", "1s")
      .with("orders.lateNoticeWindow", "5s");
  @RegisterExtension static final Evidence ev = new Evidence("X-05", "soak: channel faults, worker kills, a PostgreSQL restart; everything converges");

  enum Fault {
    NONE(45), DECLINE(10), REPLY_LOST(10), HELD_REQUEST(5), DUPLICATE_CALLBACKS(10), REORDERED_CALLBACKS(5),
    NO_PAY(10), CANCEL(5);

    final int weight;

    Fault(int weight) {
      this.weight = weight;
    }

    static Fault draw(Random r) {
      int x = r.nextInt(100);
      for (Fault f : values()) {
        if (x < f.weight) return f;
        x -= f.weight;
      }
      return NONE;
    }

    /** The channel's fault rule for an order with this fault; empty for none. */
    Map<String, Object> rule(Random r) {
      return switch (this) {
        case DECLINE -> Map.of("decline", true);
        case REPLY_LOST -> Map.of("reply_delay_ms", CHANNEL_TIMEOUT_MS + 1_500);
        case HELD_REQUEST -> Map.of("hold_request_ms", 20_000); // longer than a kill and a restart delay the query
        case DUPLICATE_CALLBACKS -> Map.of("callback_copies", 2 + r.nextInt(6));
        case REORDERED_CALLBACKS -> Map.of("callback_copies", 3, "callback_delay_ms", 200 + r.nextInt(3_000));
        default -> Map.of();
      };
    }
  }

  private record Planned(int index, Fault fault, Map<String, Object> rule) {}

  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Map<String, Integer> answers = new ConcurrentHashMap<>();
  private static final List<String> wrongAnswers = Collections.synchronizedList(new ArrayList<>());

  /** The business answers each request kind may get ("status code"); a 503 is checked apart. */
  private static final Map<String, java.util.Set<String>> ALLOWED = Map.of(
      "login", java.util.Set.of("200 TOKEN"),
      "create", java.util.Set.of("201 CREATED", "200 REPLAY", "409 SOLD_OUT"),
      "pay", java.util.Set.of("200 PAID", "200 FAILED", "200 UNKNOWN"),
      "cancel", java.util.Set.of("200 CANCELLED", "200 REPLAY_CANCEL"),
      // a copy of a success its order already applied is answered with its effect at arrival
      "callback", java.util.Set.of("200 ACCEPTED", "200 effect DUPLICATE PAID", "200 effect DUPLICATE REFUNDING",
          "200 effect DUPLICATE REFUNDED"));
  /** The codes a 503 may carry (with Retry-After); DATABASE_UNAVAILABLE only once PostgreSQL was killed. */
  private static final java.util.Set<String> ALLOWED_503 = java.util.Set.of("OVERLOADED", "ENGINE_UNAVAILABLE", "DATABASE_UNAVAILABLE");
  /** When PostgreSQL's postmaster was killed (epoch ms); Long.MAX_VALUE before. */
  private static final java.util.concurrent.atomic.AtomicLong pgKilledAt = new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);
  /** When the first 409 SOLD_OUT was answered (epoch ms); Long.MAX_VALUE before. */
  private static final java.util.concurrent.atomic.AtomicLong firstSoldOutAt = new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);

  @Test
  void soak() throws Exception {
    // the plan: drawn from the seed on this thread before anything runs, so a run can be repeated
    Random random = new Random(SEED);
    List<Planned> plan = new ArrayList<>();
    for (int i = 0; i < ORDERS; i++) {
      Fault f = Fault.draw(random);
      plan.add(new Planned(i, f, f.rule(random)));
    }
    Map<Fault, Integer> planned = new TreeMap<>();
    plan.forEach(p -> planned.merge(p.fault(), 1, Integer::sum));
    ev.note("seed " + SEED + ", " + ORDERS + " orders for " + STOCK + " units, " + CLIENTS + " clients; faults planned " + planned);
    stack.sku(SKU, STOCK, 1);

    PostgresProcess pg = PostgresProcess.of(stack);
    CallbackRecorder callbacks = new CallbackRecorder("http://127.0.0.1:" + stack.wiring.apiPort() + "/callbacks/payment");
    Map<String, String> workerProps = new LinkedHashMap<>(stack.workerProperties(CHANNEL_TIMEOUT_MS));
    workerProps.put("dw.channel.notifyUrl", callbacks.url()); // the channel's callbacks pass the recorder
    ev.equal(RECORDER_URL, callbacks.url(), "the recorder listens at the stub's configured notify URL");
    List<ChildJvm> workers = new ArrayList<>();
    AtomicInteger workerSeq = new AtomicInteger();
    workers.add(startWorker(workerProps, workerSeq.incrementAndGet()));
    workers.add(startWorker(workerProps, workerSeq.incrementAndGet()));

    AtomicInteger done = new AtomicInteger();
    AtomicInteger created = new AtomicInteger();
    AtomicBoolean clientsFinished = new AtomicBoolean();
    Map<String, Fault> orderFaults = new ConcurrentHashMap<>();
    List<String> chaosLog = Collections.synchronizedList(new ArrayList<>());
    List<Long> killTimes = Collections.synchronizedList(new ArrayList<>());
    long start = System.currentTimeMillis();

    // chaos: a worker SIGKILL every few seconds (a replacement starts at once), one PostgreSQL restart
    ExecutorService chaos = Executors.newSingleThreadExecutor();
    Future<Integer> kills = chaos.submit(() -> {
      int killed = 0;
      boolean restarted = false;
      long nextKill = System.currentTimeMillis() + WORKER_KILL_EVERY_MS;
      // the faults go on while buyers buy, and past the sell-out: a slow machine (slow replacements)
      // must not end them before the stock ran out
      while (!clientsFinished.get() || (firstSoldOutAt.get() != Long.MAX_VALUE && lastKillAt(killTimes) <= firstSoldOutAt.get())) {
        if (!restarted && done.get() >= ORDERS * 2 / 5) {
          long t0 = System.currentTimeMillis();
          pgKilledAt.set(t0);
          killTimes.add(t0);
          long old = pg.killPostmaster(30_000);
          Thread.sleep(3_000);
          long fresh = pg.restart(60_000);
          chaosLog.add("+" + (t0 - start) + " ms PostgreSQL SIGKILL (pid " + old + "), up again as " + fresh + " after "
              + (System.currentTimeMillis() - t0) + " ms");
          restarted = true;
        }
        if (System.currentTimeMillis() >= nextKill) {
          ChildJvm victim = workers.remove(0);
          victim.killHard();
          killTimes.add(System.currentTimeMillis());
          killed++;
          workers.add(startWorker(workerProps, workerSeq.incrementAndGet()));
          nextKill = System.currentTimeMillis() + WORKER_KILL_EVERY_MS;
        }
        Thread.sleep(100);
      }
      if (!restarted) chaosLog.add("PostgreSQL was not restarted: the clients finished first");
      return killed;
    });

    ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
    List<Future<?>> runs = new ArrayList<>();
    for (Planned p : plan) {
      runs.add(clients.submit(() -> {
        try {
          String id = buy(p);
          if (id != null) {
            created.incrementAndGet();
            orderFaults.put(id, p.fault());
          }
        } catch (Exception e) {
          wrongAnswers.add("order " + p.index() + ": " + e);
        } finally {
          done.incrementAndGet();
        }
        return null;
      }));
    }
    for (Future<?> f : runs) f.get(20, TimeUnit.MINUTES);
    long plannedMs = System.currentTimeMillis() - start;
    // closing buyers, the kills still running: until every order is final (nothing can come back)
    // and a create then is answered SOLD_OUT
    int closing = closingBuyers(created, orderFaults);
    long clientMs = System.currentTimeMillis() - start;
    clientsFinished.set(true);
    int workerKills;
    try {
      workerKills = kills.get(2, TimeUnit.MINUTES);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException chaosFailed) {
      for (ChildJvm w : workers) w.close(); // no worker outlives a failed run
      callbacks.close();
      throw chaosFailed;
    }
    chaos.shutdown();
    clients.shutdown();
    try {
      ev.note(String.format("planned buyers done in %d ms, closing buyers (%d orders) in %d ms: %d orders created (%.1f orders/s)",
          plannedMs, closing, clientMs - plannedMs, created.get(), created.get() * 1000.0 / clientMs));
      ev.note("worker SIGKILLs: " + workerKills + " (each replaced at once); " + String.join("; ", chaosLog));
      long firstFault = killTimes.stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
      long lastFault = killTimes.stream().mapToLong(Long::longValue).max().orElse(Long.MIN_VALUE);
      long soldOut = firstSoldOutAt.get();
      ev.note("the stock first ran out (first 409 SOLD_OUT) at +" + (soldOut == Long.MAX_VALUE ? "never" : (soldOut - start) + " ms")
          + "; faults from +" + (firstFault - start) + " ms to +" + (lastFault - start) + " ms, PostgreSQL killed at +"
          + (pgKilledAt.get() == Long.MAX_VALUE ? "never" : String.valueOf(pgKilledAt.get() - start)) + " ms; "
          + killTimes.stream().filter(t -> t > soldOut).count() + " faults after the sell-out");
      ev.check(soldOut > firstFault && soldOut < lastFault,
          "the sale sold out while the faults ran: after the first fault and before the last");
      ev.check(workerKills >= 1, "workers were SIGKILLed during the run (" + workerKills + ", one every " + WORKER_KILL_EVERY_MS + " ms after the last replacement polled)");
      ev.check(chaosLog.stream().anyMatch(l -> l.contains("PostgreSQL SIGKILL")), "PostgreSQL was killed and restarted once");

      convergesAndReconciles(orderFaults);

      // the callbacks too: the recorder saw every one, up to the late copies of the settling
      callbacks.answers.forEach((kind, n) -> answers.merge(kind, n, Integer::sum));
      ev.note("answers " + new TreeMap<>(answers));
      ev.check(wrongAnswers.isEmpty(), "every answer is on its request kind's allow-list (" + new TreeMap<>(ALLOWED) + "; 503 "
          + new java.util.TreeSet<>(ALLOWED_503) + " with Retry-After, DATABASE_UNAVAILABLE only after the PostgreSQL kill)"
          + (wrongAnswers.isEmpty() ? "" : ": " + wrongAnswers.size() + " not, e.g. " + wrongAnswers.subList(0, Math.min(5, wrongAnswers.size()))));
      ev.check(callbacks.answers.keySet().stream().anyMatch(k -> k.startsWith("callback 200")), "the channel's callbacks passed the recorder");
    } finally {
      for (ChildJvm w : workers) w.close();
      callbacks.close();
    }
  }

  private void convergesAndReconciles(Map<String, Fault> orderFaults) throws Exception {
    String notFinal = "SELECT count(*) FROM orders WHERE sku = '" + SKU + "' AND status NOT IN ('PAID', 'FAILED', 'CANCELLED', 'REFUNDED')";
    long settleStart = System.currentTimeMillis();
    stack.awaitTrue(() -> stack.sql.count(notFinal) == 0, 240_000, "orders still not final: "
        + stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", SKU));
    stack.awaitNothingPending(120_000);
    ev.note("every order final " + (System.currentTimeMillis() - settleStart) + " ms after the clients finished");
    ev.equal(0L, stack.sql.count(notFinal), "every order is final");
    ev.note("statuses " + stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", SKU));
    ev.note("transitions by cause " + stack.sql.histogram("SELECT coalesce(from_status, '') || '->' || to_status || ' ' || regexp_replace(cause, '[0-9]+', '#', 'g')"
        + " FROM order_transition t JOIN orders o USING (order_id) WHERE o.sku = ?", SKU));

    // the outcomes that do not depend on scheduling
    Map<String, String> status = new LinkedHashMap<>();
    for (String row : stack.sql.column("SELECT order_id || ' ' || status FROM orders WHERE sku = ?", SKU)) {
      String[] kv = row.split(" ");
      status.put(kv[0], kv[1]);
    }
    // a decline always fails and an unpaid or cancelled order always ends CANCELLED. A paid path
    // ends PAID, or FAILED when its charge never reached the channel before the close (a worker
    // killed mid-call, a held request outlived by the query): then the channel must hold no charge
    List<String> off = new ArrayList<>();
    Map<String, Integer> paidPathOutcomes = new TreeMap<>();
    orderFaults.forEach((id, fault) -> {
      String s = status.get(id);
      boolean ok = switch (fault) {
        case DECLINE -> "FAILED".equals(s);
        case NO_PAY, CANCEL -> "CANCELLED".equals(s);
        default -> {
          paidPathOutcomes.merge(fault + " " + s, 1, Integer::sum);
          yield "PAID".equals(s) || ("FAILED".equals(s)
              && !"CHARGED".equals(stack.channel.get("/charges/" + id).text("status")));
        }
      };
      if (!ok) off.add(id + " " + fault + " → " + s);
    });
    ev.note("paid paths by fault and outcome " + paidPathOutcomes);
    ev.check(off.isEmpty(), "a decline FAILED, no pay or a cancel CANCELLED, every paid path PAID or FAILED with no"
        + " charge at the channel" + (off.isEmpty() ? "" : " " + off.subList(0, Math.min(5, off.size()))
        + "; answers off the allow-list meanwhile: " + wrongAnswers.subList(0, Math.min(5, wrongAnswers.size()))));

    long total = STOCK;
    int remaining = stack.sql.remaining(SKU);
    long held = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE sku = ? AND status = 'HELD'", SKU);
    long confirmed = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE sku = ? AND status = 'CONFIRMED'", SKU);
    long paid = stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", SKU);
    ev.note("stock " + total + ": remaining " + remaining + ", held " + held + ", confirmed " + confirmed + "; PAID " + paid);
    ev.equal(0, remaining, "sold out at the end: remaining 0");
    ev.equal(total, paid, "no oversell and nothing lost: PAID = stock");
    ev.equal(total, remaining + held + confirmed, "conservation: remaining + held + confirmed = total");
    ev.equal(paid, confirmed, "one confirmed unit per PAID order");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders o WHERE o.sku = ? AND o.status = 'PAID' AND ("
        + " (SELECT count(*) FROM order_transition t WHERE t.order_id = o.order_id AND t.to_status = 'PAID') <> 1"
        + " OR (SELECT count(*) FROM outbox e WHERE e.order_id = o.order_id AND e.event_type = 'ORDER_PAID') <> 1)", SKU),
        "every PAID order has one PAID transition and one ORDER_PAID event");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM (SELECT merchant_order FROM payment_notification"
        + " WHERE effect = 'PAID' GROUP BY merchant_order HAVING count(*) > 1) twice"),
        "no order took a PAID effect from two notices");
    stack.checkReconcileClean(ev, "reconcile after the soak: mismatches=0 pending=0 drift=0");
  }

  private static ChildJvm startWorker(Map<String, String> props, int n) throws Exception {
    ChildJvm w = ChildJvm.start("x05-worker-" + n, props, "worker", "embedded.yml");
    try {
      // a deadline for a condition: on a loaded machine a fresh JVM and its first polls can take minutes
      w.awaitLog("worker polling", 300_000);
    } catch (RuntimeException | Error | InterruptedException notPolling) {
      w.close(); // not left running after the experiment gives up on it
      throw notPolling;
    }
    return w;
  }

  private static long lastKillAt(List<Long> killTimes) {
    synchronized (killTimes) {
      return killTimes.stream().mapToLong(Long::longValue).max().orElse(Long.MIN_VALUE);
    }
  }

  /** One buyer: log in, create (its request key), set the planned fault, then pay, cancel or walk away. */
  private static String buy(Planned p) throws Exception {
    String subject = String.format("user-x05-%05d", p.index());
    String token = untilNot503("login", null, "/session",
        HttpJson.JSON.writeValueAsString(Map.of("tenant", "t1", "subject", subject)), null).path("token").asText();
    var created = untilNot503("create", token, "/orders",
        HttpJson.JSON.writeValueAsString(Buyers.order("x05-" + p.index(), SKU, 1)), null);
    String id = created.hasNonNull("code") ? null : created.path("order_id").asText(null);
    if (id == null) return null; // 409 SOLD_OUT, or a wrong answer (recorded)
    if (!p.rule().isEmpty()) Buyers.fault(stack.channel, id, p.rule());
    switch (p.fault()) {
      case NO_PAY -> { }
      case CANCEL -> untilNot503("cancel", token, "/orders/" + id + "/cancel", "", null);
      default -> untilNot503("pay", token, "/orders/" + id + "/pay", "", "x05-pay-" + p.index());
    }
    return id;
  }

  /**
   * Closing buyers, one after another: while orders are still open a unit may come back, so each
   * time the stock has a unit a buyer takes it and pays (no fault); once every order is final and a
   * create is answered SOLD_OUT, nothing can come back. Returns how many orders they created.
   */
  private static int closingBuyers(AtomicInteger created, Map<String, Fault> orderFaults) throws Exception {
    String open = "SELECT count(*) FROM orders WHERE sku = '" + SKU + "' AND status NOT IN ('PAID', 'FAILED', 'CANCELLED', 'REFUNDED')";
    long deadline = System.currentTimeMillis() + 600_000;
    int n = 0;
    for (int i = ORDERS; System.currentTimeMillis() < deadline; i++) {
      boolean allFinal = stack.sql.count(open) == 0;
      if (!allFinal && stack.sql.remaining(SKU) == 0) {
        Thread.sleep(200); // nothing to buy yet: a unit may still come back
        continue;
      }
      Planned p = new Planned(i, Fault.NONE, Map.of());
      String id = buy(p);
      if (id != null) {
        n++;
        created.incrementAndGet();
        orderFaults.put(id, Fault.NONE);
      } else if (allFinal) {
        return n; // SOLD_OUT with every order final: the sale is over
      }
    }
    throw new AssertionError("the closing buyers did not see the sale end within 600 s");
  }

  /** Whether an answer is on its kind's allow-list; a 503 needs an allowed code and Retry-After. */
  private static boolean allowed(String call, int status, String code, boolean retryAfter, long receivedAt) {
    if (status == 503) {
      return retryAfter && ALLOWED_503.contains(code)
          && (!"DATABASE_UNAVAILABLE".equals(code) || receivedAt >= pgKilledAt.get());
    }
    return ALLOWED.get(call).contains(status + " " + code);
  }

  /** The code an answer is listed by: the error, the outcome, or the order status (TOKEN for a session). */
  private static String codeOf(com.fasterxml.jackson.databind.JsonNode json) {
    if (json == null) return "(no JSON)";
    if (json.hasNonNull("code")) return json.path("code").asText();
    if (json.hasNonNull("outcome")) return json.path("outcome").asText();
    if (json.hasNonNull("token")) return "TOKEN";
    if (json.has("accepted")) return json.path("accepted").asBoolean() && !json.hasNonNull("effect") ? "ACCEPTED"
        : "effect " + json.path("effect").asText();
    return json.path("status").asText("");
  }

  /**
   * Sends until the answer is not a 503 (a bounded while); records each answer's kind, and as
   * wrong any answer not on the kind's allow-list.
   */
  private static com.fasterxml.jackson.databind.JsonNode untilNot503(String call, String token, String path, String body,
      String idempotencyKey) throws Exception {
    long deadline = System.currentTimeMillis() + 180_000;
    while (true) {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + path))
          .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body));
      if (token != null) b.header("Authorization", "Bearer " + token);
      if (idempotencyKey != null) b.header("Idempotency-Key", idempotencyKey);
      HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
      com.fasterxml.jackson.databind.JsonNode json;
      try {
        json = HttpJson.JSON.readTree(r.body());
      } catch (Exception notJson) {
        json = null;
      }
      String code = codeOf(json);
      answers.merge(call + " " + r.statusCode() + " " + code, 1, Integer::sum);
      if (!allowed(call, r.statusCode(), code, r.headers().firstValue("Retry-After").isPresent(), System.currentTimeMillis())) {
        wrongAnswers.add(call + " " + path + " → " + r.statusCode() + " " + r.body());
      }
      if (r.statusCode() == 409 && "SOLD_OUT".equals(code)) firstSoldOutAt.accumulateAndGet(System.currentTimeMillis(), Math::min);
      if (r.statusCode() != 503) return json == null ? HttpJson.JSON.createObjectNode() : json;
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException(call + " still 503 after 180 s");
      Thread.sleep(300);
    }
  }

  /**
   * A forwarder between the channel and the API's callback endpoint: passes each callback (body and
   * signature) on, answers the channel with the API's answer, and checks that answer against the
   * callback allow-list.
   */
  private static final class CallbackRecorder implements AutoCloseable {
    final Map<String, Integer> answers = new ConcurrentHashMap<>();
    private final com.sun.net.httpserver.HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "x05-callback-recorder");
      t.setDaemon(true);
      return t;
    });

    CallbackRecorder(String target) throws java.io.IOException {
      server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", RECORDER_PORT), 64);
      server.setExecutor(threads);
      server.createContext("/", ex -> {
        try (ex) {
          byte[] body = ex.getRequestBody().readAllBytes();
          HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(target)).timeout(Duration.ofSeconds(30))
              .POST(HttpRequest.BodyPublishers.ofByteArray(body));
          ex.getRequestHeaders().forEach((name, values) -> {
            if (name.equalsIgnoreCase("Content-Type") || name.toLowerCase(java.util.Locale.ROOT).contains("signature")) {
              values.forEach(v -> req.header(name, v));
            }
          });
          HttpResponse<String> r;
          try {
            r = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
          } catch (java.io.IOException | InterruptedException e) {
            ex.sendResponseHeaders(502, -1); // the channel retries; the API was not reached
            answers.merge("callback (API not reached)", 1, Integer::sum);
            return;
          }
          com.fasterxml.jackson.databind.JsonNode json;
          try {
            json = HttpJson.JSON.readTree(r.body());
          } catch (Exception notJson) {
            json = null;
          }
          String code = codeOf(json);
          answers.merge("callback " + r.statusCode() + " " + code, 1, Integer::sum);
          if (!allowed("callback", r.statusCode(), code, r.headers().firstValue("Retry-After").isPresent(), System.currentTimeMillis())) {
            wrongAnswers.add("callback → " + r.statusCode() + " " + r.body());
          }
          byte[] out = r.body().getBytes(java.nio.charset.StandardCharsets.UTF_8);
          r.headers().firstValue("Content-Type").ifPresent(v -> ex.getResponseHeaders().set("Content-Type", v));
          r.headers().firstValue("Retry-After").ifPresent(v -> ex.getResponseHeaders().set("Retry-After", v));
          ex.sendResponseHeaders(r.statusCode(), out.length == 0 ? -1 : out.length);
          if (out.length > 0) ex.getResponseBody().write(out);
        }
      });
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/callbacks/payment";
    }

    @Override
    public void close() {
      server.stop(0);
      threads.shutdownNow();
    }
  }
}
