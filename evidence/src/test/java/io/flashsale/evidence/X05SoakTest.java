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
 * <p>At the end: every answer was a business answer or a 503 with a code, every order is final,
 * nothing oversold, stock conserved, one PAID transition and one event per PAID order, at most
 * one effect per notice, and reconcile finds mismatches=0 pending=0 drift=0. The figures
 * (orders/s, faults by kind, kills, transitions by cause) are in the output.
 *
 * <p>The dev server only: the in-memory engine never moves a dead worker's workflow tasks off its
 * sticky queue, so killing workers that host workflows only makes sense on a real server.
 */
@Tag("dev-server-only")
class X05SoakTest {
  static final int DEFAULT_ORDERS = 1_000;
  private static final int ORDERS = Integer.getInteger("soak.orders", DEFAULT_ORDERS);
  private static final long SEED = Long.getLong("soak.seed", 5);
  private static final int STOCK = ORDERS * 3 / 4;
  private static final int CLIENTS = 16;
  private static final long CHANNEL_TIMEOUT_MS = 1_500;
  private static final long WORKER_KILL_EVERY_MS = 5_000;
  private static final String SKU = "sku-x05";

  @RegisterExtension static final Stack stack = new Stack().with("worker", false)
      .with("orders.reservationTtlMs", 30_000)
      .with("orders.unknownFirstQueryMs", 1_000)
      .with("orders.lateNoticeWindowMs", 5_000);
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
    Map<String, String> workerProps = stack.workerProperties(CHANNEL_TIMEOUT_MS);
    List<ChildJvm> workers = new ArrayList<>();
    AtomicInteger workerSeq = new AtomicInteger();
    workers.add(startWorker(workerProps, workerSeq.incrementAndGet()));
    workers.add(startWorker(workerProps, workerSeq.incrementAndGet()));

    AtomicInteger done = new AtomicInteger();
    AtomicInteger created = new AtomicInteger();
    AtomicBoolean clientsFinished = new AtomicBoolean();
    Map<String, Fault> orderFaults = new ConcurrentHashMap<>();
    List<String> chaosLog = Collections.synchronizedList(new ArrayList<>());
    long start = System.currentTimeMillis();

    // chaos: a worker SIGKILL every few seconds (a replacement starts at once), one PostgreSQL restart
    ExecutorService chaos = Executors.newSingleThreadExecutor();
    Future<Integer> kills = chaos.submit(() -> {
      int killed = 0;
      boolean restarted = false;
      long nextKill = System.currentTimeMillis() + WORKER_KILL_EVERY_MS;
      while (!clientsFinished.get()) {
        if (!restarted && done.get() >= ORDERS * 2 / 5) {
          long t0 = System.currentTimeMillis();
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
    long clientMs = System.currentTimeMillis() - start;
    clientsFinished.set(true);
    int workerKills = kills.get(2, TimeUnit.MINUTES);
    chaos.shutdown();
    clients.shutdown();
    try {
      ev.note(String.format("clients done in %d ms: %d orders created (%.1f orders/s), %d SOLD_OUT or refused",
          clientMs, created.get(), created.get() * 1000.0 / clientMs, ORDERS - created.get()));
      ev.note("worker SIGKILLs: " + workerKills + " (each replaced at once); " + String.join("; ", chaosLog));
      ev.note("answers " + new TreeMap<>(answers));
      ev.check(wrongAnswers.isEmpty(), "every answer was a business answer or a 503 with a JSON code"
          + (wrongAnswers.isEmpty() ? "" : ": " + wrongAnswers.subList(0, Math.min(5, wrongAnswers.size()))));
      ev.check(workerKills >= 1, "workers were SIGKILLed during the run (" + workerKills + ", one every " + WORKER_KILL_EVERY_MS + " ms after the last replacement polled)");
      ev.check(chaosLog.stream().anyMatch(l -> l.contains("PostgreSQL SIGKILL")), "PostgreSQL was killed and restarted once");

      convergesAndReconciles(orderFaults);
    } finally {
      for (ChildJvm w : workers) w.close();
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
        + " charge at the channel" + (off.isEmpty() ? "" : " " + off.subList(0, Math.min(5, off.size()))));

    long total = STOCK;
    int remaining = stack.sql.remaining(SKU);
    long held = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE sku = ? AND status = 'HELD'", SKU);
    long confirmed = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE sku = ? AND status = 'CONFIRMED'", SKU);
    long paid = stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", SKU);
    ev.note("stock " + total + ": remaining " + remaining + ", held " + held + ", confirmed " + confirmed + "; PAID " + paid);
    ev.check(paid <= total, "no oversell: PAID " + paid + " <= " + total);
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
    w.awaitLog("worker polling", 120_000);
    return w;
  }

  /** One buyer: log in, create (its request key), set the planned fault, then pay, cancel or walk away. */
  private static String buy(Planned p) throws Exception {
    String subject = String.format("user-x05-%05d", p.index());
    String token = untilNot503("login", null, "/session",
        HttpJson.JSON.writeValueAsString(Map.of("tenant", "t1", "subject", subject)), null).path("token").asText();
    var created = untilNot503("create", token, "/orders",
        HttpJson.JSON.writeValueAsString(Buyers.order("x05-" + p.index(), SKU, 1)), null);
    String id = created.path("order_id").asText(null);
    if (id == null) return null; // sold out
    if (!p.rule().isEmpty()) Buyers.fault(stack.channel, id, p.rule());
    switch (p.fault()) {
      case NO_PAY -> { }
      case CANCEL -> untilNot503("cancel", token, "/orders/" + id + "/cancel", "", null);
      default -> untilNot503("pay", token, "/orders/" + id + "/pay", "", "x05-pay-" + p.index());
    }
    return id;
  }

  /**
   * Sends until the answer is not a 503 (a bounded while); records each answer's kind, and as
   * wrong any 5xx other than a 503 with a JSON error code, or an answer without JSON.
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
      String code = json == null ? "(no JSON)" : json.has("error") ? json.path("error").asText()
          : json.has("outcome") && !json.path("outcome").isNull() ? json.path("outcome").asText()
          : json.path("status").asText("");
      answers.merge(call + " " + r.statusCode() + " " + code, 1, Integer::sum);
      if (json == null || (r.statusCode() >= 500 && (r.statusCode() != 503 || !json.has("error")))) {
        wrongAnswers.add(call + " " + path + " → " + r.statusCode() + " " + r.body());
      }
      if (r.statusCode() != 503) return json == null ? HttpJson.JSON.createObjectNode() : json;
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException(call + " still 503 after 180 s");
      Thread.sleep(300);
    }
  }
}
