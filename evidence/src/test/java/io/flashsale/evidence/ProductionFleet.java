package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.launcher.cli.RelayCommand;
import io.flashsale.tools.bench.ProcStat;
import java.io.UncheckedIOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The production shape's service processes around a test's {@link Stack} (API A, the orders'
 * PostgreSQL, the channel stub and the consumer): API B, two worker processes and one relay, each
 * its own JVM, joined to one Temporal frontend, payloads encrypted with one key; and the crowd
 * that buys through both APIs. X-30 runs it on the Temporal server, X-30b on the dev server.
 */
final class ProductionFleet implements AutoCloseable {
  static final String PAYLOAD_KEY = randomHex(32);
  static final String TOKEN_KEY = "x30-token-key-" + randomHex(24);
  static final long CHANNEL_TIMEOUT_MS = 3_000;
  static final int WARM_UP = 30;
  static final int CLEAN = 80;
  /** Deadlines for conditions on a loaded 2-core machine, not speed bounds. */
  static final long BUYER_DEADLINE_MS = 240_000;
  static final long CONVERGE_DEADLINE_MS = 240_000;
  /** The share of a sale with no fault that must end PAID (the rest only by a charge the channel never saw). */
  private static final double MIN_PAID_SHARE = 0.9;
  /** How a timeline ends when the close made sure a charge never lands: FAILED, not charged. */
  private static final java.util.regex.Pattern NEVER_CHARGED_END =
      java.util.regex.Pattern.compile("\\[UNKNOWN->FAILED v\\d+ close CLOSED\\]$");
  private static final AtomicInteger RETRIED = new AtomicInteger();

  final Stack stack;
  final Evidence ev;
  final ChildJvm apiB;
  final ChildJvm worker1;
  final ChildJvm worker2;
  final ChildJvm relay;
  final HttpJson a;
  final HttpJson onB;
  final int apiPortB;

  /** API A's settings: no order worker and no relay in it (the fleet's processes are those), no trace log. */
  static Stack stack() {
    return new Stack()
        .with("worker", false)
        .with("relay.enabled", false)
        .with("tracing.exporter", "none")
        .with("auth.secret", TOKEN_KEY) // both APIs verify the same tokens, as behind one load balancer
        .with("temporal.payloadEncryption.enabled", true)
        .with("temporal.payloadEncryption.activeKeyId", "k1")
        .with("temporal.payloadEncryption.keys.k1", PAYLOAD_KEY);
  }

  private ProductionFleet(Stack stack, Evidence ev, ChildJvm apiB, ChildJvm worker1, ChildJvm worker2, ChildJvm relay,
      int apiPortB) {
    this.stack = stack;
    this.ev = ev;
    this.apiB = apiB;
    this.worker1 = worker1;
    this.worker2 = worker2;
    this.relay = relay;
    this.apiPortB = apiPortB;
    this.a = stack.api;
    this.onB = new HttpJson("http://127.0.0.1:" + apiPortB, null);
  }

  /** Starts API B, the two workers and the relay against the frontend at {@code target}; returns once all serve. */
  /** {@code tls}: the joining processes' {@code temporal.tls} settings (none on the dev server). */
  static ProductionFleet start(Stack stack, Evidence ev, String target, Map<String, String> tls) throws Exception {
    int apiPort = Stack.freePortForChild();
    int adminPort = Stack.freePortForChild();
    Map<String, String> api = new LinkedHashMap<>(joining(stack, target, tls));
    api.put("dw.worker", "false");
    api.put("dw.server.applicationConnectors[0].port", String.valueOf(apiPort));
    api.put("dw.server.adminConnectors[0].port", String.valueOf(adminPort));
    api.put("dw.auth.secret", TOKEN_KEY);
    api.put("dw.auth.devLogin", "true");
    api.put("dw.auth.devLoginOutsideLocalDefault", "true"); // a test instance: its buyers log in by dev login
    api.put("dw.channel.callbackSecret", stack.wiring.callbackSecret());
    api.put("dw.consumer.enabled", "false");
    api.put("dw.relay.enabled", "false");
    api.put("dw.seed.enabled", "false");
    String name = ev.id().toLowerCase(java.util.Locale.ROOT);
    List<ChildJvm> started = new ArrayList<>();
    try {
      started.add(ChildJvm.start(name + "-api-b", api, "server", "embedded.yml"));
      started.add(ChildJvm.start(name + "-worker-1", joining(stack, target, tls), "worker", "embedded.yml"));
      started.add(ChildJvm.start(name + "-worker-2", joining(stack, target, tls), "worker", "embedded.yml"));
      started.add(ChildJvm.start(name + "-relay", Map.of(),
          Map.of(RelayCommand.DELIVERY_SECRET_ENV, stack.wiring.deliverySecret()), "relay", "--database-url", stack.wiring.jdbcUrl(),
          "--consumer-url", stack.wiring.consumer().url(), "--name", name));
      started.get(0).awaitLog("=== flashsale is up ===", 180_000);
      started.get(1).awaitLog("worker polling", 180_000);
      started.get(2).awaitLog("worker polling", 180_000);
      ev.check(started.get(3).isAlive(), "the relay runs");
    } catch (Exception | AssertionError e) {
      for (ChildJvm c : started) c.close();
      throw e;
    }
    return new ProductionFleet(stack, ev, started.get(0), started.get(1), started.get(2), started.get(3), apiPort);
  }

  /** System properties of a process that joins the sale: orders database, the frontend, the channel, the key. */
  private static Map<String, String> joining(Stack stack, String target, Map<String, String> tls) {
    Map<String, String> p = new LinkedHashMap<>(stack.workerProperties(CHANNEL_TIMEOUT_MS));
    p.put("dw.temporal.target", target);
    tls.forEach((key, value) -> p.put("dw." + key, value));
    p.put("dw.tracing.exporter", "none");
    p.put("dw.temporal.payloadEncryption.enabled", "true");
    p.put("dw.temporal.payloadEncryption.activeKeyId", "k1");
    p.put("dw.temporal.payloadEncryption.keys.k1", PAYLOAD_KEY);
    return p;
  }

  String describe() {
    return String.format("API A :%d (this JVM, pid %d), API B :%d (pid %d), workers pid %d and %d, relay pid %d",
        stack.wiring.apiPort(), ProcessHandle.current().pid(), apiPortB, apiB.pid(), worker1.pid(), worker2.pid(),
        relay.pid());
  }

  /**
   * WARM_UP orders created and paid, not measured: every JVM has loaded and compiled its paths.
   * Each must end; on a loaded machine a cold worker's first charge may outlast the channel's
   * timeout and end FAILED (its query finds nothing), which is the product working, so the
   * warm-up notes such an order with its timeline rather than requiring PAID.
   */
  void warmUp() throws Exception {
    String sku = "sku-warm";
    stack.sku(sku, WARM_UP, 1);
    Sale warm = sale(sku, WARM_UP, 0, null);
    ev.note("warm-up: " + warm.outcomes());
    awaitEnded(sku, WARM_UP);
    ev.note("warm-up orders ended: " + new TreeMap<>(stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", sku)));
  }

  /** Every one of a sale's {@code orders} reaches an end state; any not PAID is noted with its timeline. */
  private void awaitEnded(String sku, int orders) throws InterruptedException {
    try {
      stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status IN"
          + " ('PAID', 'FAILED', 'CANCELLED', 'REFUNDED')", sku) == orders, CONVERGE_DEADLINE_MS,
          sku + ": not all " + orders + " orders ended");
    } finally {
      for (String id : stack.sql.column("SELECT order_id FROM orders WHERE sku = ? AND status <> 'PAID'", sku)) {
        ev.note(sku + ": timeline " + id + ": " + stack.sql.timeline(id));
      }
    }
  }

  /**
   * CLEAN orders, none sold out, each created and paid by 16 buyers at a time split across both
   * APIs; the FIGURES line: rates and CPU per order of each process ({@code serverPgPid} 0: none).
   */
  void cleanSale(String engine, LongSupplier serverPid, long serverPgPid) throws Exception {
    String sku = "sku-clean";
    stack.sku(sku, CLEAN * 2, 1);
    long ordersPg = PostgresProcess.postmasterPid(stack.wiring.stack().postgresDir().toPath());
    Cpu before = cpu(serverPid.getAsLong(), serverPgPid, ordersPg);
    long start = System.nanoTime();
    Sale s = sale(sku, CLEAN, 0, null);
    double createdSeconds = s.allCreatedNanos() / 1e9;
    awaitPaid(sku, CLEAN);
    double paidSeconds = (System.nanoTime() - start) / 1e9;
    Cpu spent = cpu(serverPid.getAsLong(), serverPgPid, ordersPg).minus(before);
    ev.equal(Map.of("CREATED", CLEAN), s.outcomes(), "every buyer of the clean sale got an order");
    ev.note(String.format("FIGURES %s %s, clean sale of %d orders split across 2 APIs (16 buyers at a time), create + pay"
            + " each: %.1f created/s, %.1f PAID/s; CPU per order: the Temporal process %.1f ms, its PostgreSQL %s,"
            + " orders PostgreSQL %.1f ms, API B + 2 workers + relay %.1f ms, this JVM (API A, stub, consumer, buyers) %.1f ms",
        ev.id(), engine, CLEAN, CLEAN / createdSeconds, CLEAN / paidSeconds, spent.server() / 1e6 / CLEAN,
        serverPgPid > 0 ? String.format("%.1f ms", spent.serverPg() / 1e6 / CLEAN) : "none (SQLite in the server)",
        spent.ordersPg() / 1e6 / CLEAN, spent.service() / 1e6 / CLEAN, spent.self() / 1e6 / CLEAN));
  }

  /**
   * Every order of a sale with no fault ends, and ends PAID unless the channel never saw its charge.
   * On a loaded machine a charge's activity task can be lost between the server and a worker (the
   * server counts it started, no worker runs it, its start-to-close timeout fires): the charge is
   * UNKNOWN, its query finds nothing, its close makes it FAILED and nothing was charged. That is
   * the product working, so such an order is noted and allowed (reconcile later checks the ledger
   * holds no charge for it); any other end fails the check with its timeline, and at least
   * MIN_PAID_SHARE of the sale must be PAID.
   */
  void awaitPaid(String sku, int orders) throws InterruptedException {
    awaitEnded(sku, orders);
    Map<String, Integer> ends = stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", sku);
    List<String> otherEnds = new ArrayList<>();
    int neverCharged = 0;
    for (String id : stack.sql.column("SELECT order_id FROM orders WHERE sku = ? AND status <> 'PAID'", sku)) {
      String timeline = stack.sql.timeline(id);
      if (timeline.contains("[PAYING->UNKNOWN v3 charge activity failure]") && NEVER_CHARGED_END.matcher(timeline).find()) {
        neverCharged++;
      } else {
        otherEnds.add(id + ": " + timeline);
      }
    }
    int paid = ends.getOrDefault("PAID", 0);
    ev.note(sku + ": " + new TreeMap<>(ends) + ", of which FAILED with a charge the channel never saw: " + neverCharged);
    ev.equal(List.of(), otherEnds, sku + ": every order PAID, or FAILED because its charge never reached the channel");
    ev.check(paid >= Math.ceil(orders * MIN_PAID_SHARE), sku + ": at least " + (int) (MIN_PAID_SHARE * 100)
        + " % of the orders PAID (" + paid + " of " + orders + ")");
  }

  /** Every event published by the relay and applied by the consumer exactly once. */
  void eventsReachedTheConsumerOnce() throws InterruptedException {
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL") == 0,
        CONVERGE_DEADLINE_MS, "the relay did not publish every event");
    long events = stack.sql.count("SELECT count(*) FROM outbox");
    long applied = stack.sql.count("SELECT count(*) FROM fulfillment.ful_received WHERE effect = 'APPLIED'");
    ev.note("events " + events + ", consumer effects " + stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"));
    ev.equal(events, applied, "every event was applied by the consumer exactly once");
    ev.equal(events, stack.sql.count("SELECT count(*) FROM fulfillment.ful_inbox"), "one inbox row per event");
  }

  static int retried() {
    return RETRIED.get();
  }

  @Override
  public void close() throws InterruptedException {
    InterruptedException interrupted = null;
    for (ChildJvm c : List.of(relay, worker2, worker1, apiB)) {
      try {
        c.close();
      } catch (InterruptedException e) {
        interrupted = e; // the others are still stopped
      }
    }
    if (interrupted != null) throw interrupted;
  }

  /** What a sale's buyers ended with, and when the last create was answered. */
  record Sale(Map<String, Integer> outcomes, long allCreatedNanos, long lastCreateAnsweredAt, int failedOver,
      String faultError) {}

  /**
   * {@code buyers} buyers, odd ones on B, each creating one unit then paying it; a buyer started
   * {@code staggerMs} after the one before; {@code faults} (if any) runs beside them. A 503 is sent
   * again with the same key, as the API asks; a buyer whose API is gone goes on at A, same token.
   */
  Sale sale(String sku, int buyers, long staggerMs, Runnable faults) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(staggerMs > 0 ? buyers : 16);
    ExecutorService faultThread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "x30-faults");
      t.setDaemon(true);
      return t;
    });
    Future<?> faultRun = faults == null ? null : faultThread.submit(faults);
    AtomicInteger failedOver = new AtomicInteger();
    java.util.concurrent.atomic.AtomicLong lastCreated = new java.util.concurrent.atomic.AtomicLong();
    long start = System.nanoTime();
    List<Callable<String>> calls = new ArrayList<>();
    for (int i = 0; i < buyers; i++) {
      int n = i;
      calls.add(() -> {
        if (staggerMs > 0) Thread.sleep(n * staggerMs);
        String subject = String.format("user-%s-%03d", sku, n);
        Buyer buyer = Buyer.login(n % 2 == 1 ? onB : a, a, subject, failedOver);
        HttpJson.Reply created = buyer.send(api -> Buyers.create(api, "x30-" + n, sku, 1));
        lastCreated.accumulateAndGet(System.nanoTime(), Math::max);
        if (created.status() == 409 && "SOLD_OUT".equals(created.text("outcome"))) return "SOLD_OUT";
        boolean ordered = created.status() == 201 || created.status() == 200 && "REPLAY".equals(created.text("outcome"));
        if (!ordered) return created.status() + " " + created.raw();
        String orderId = created.text("order_id");
        // keyed: a pay sent again after a 503 or a dead API gets the first answer, not REJECTED PAYING
        HttpJson.Reply paid = buyer.send(api -> Buyers.pay(api, orderId, "x30-pay-" + n));
        // how the order ended is read from the database; a pay not answered 2xx is told apart here
        return paid.status() / 100 == 2 ? "CREATED" : "CREATED, pay answered " + paid.status() + " " + (paid.text("code") != null ? paid.text("code") : paid.text("outcome"));
      });
    }
    Map<String, Integer> outcomes = new TreeMap<>();
    try {
      List<Future<String>> results = pool.invokeAll(calls);
      long created = lastCreated.get() - start;
      for (Future<String> f : results) outcomes.merge(f.get(), 1, Integer::sum);
      String faultError = null;
      if (faultRun != null) {
        try {
          faultRun.get(180, TimeUnit.SECONDS);
        } catch (Exception e) {
          faultError = String.valueOf(e.getCause() == null ? e : e.getCause());
        }
      }
      return new Sale(outcomes, created, lastCreated.get(), failedOver.get(), faultError);
    } finally {
      pool.shutdownNow();
      if (faultRun != null) faultRun.cancel(true);
      faultThread.shutdownNow();
    }
  }

  /** One buyer: its API instance, and A with the same token once that one is gone. */
  private static final class Buyer {
    private HttpJson api;
    private final HttpJson fallback;
    private final AtomicInteger failedOver;

    Buyer(HttpJson home, HttpJson fallback, AtomicInteger failedOver) {
      this.api = home;
      this.fallback = fallback;
      this.failedOver = failedOver;
    }

    /** Logs in at its home instance, or at A when that one is gone (the same token works on both). */
    static Buyer login(HttpJson home, HttpJson a, String subject, AtomicInteger failedOver) throws InterruptedException {
      long deadline = System.currentTimeMillis() + BUYER_DEADLINE_MS;
      HttpJson at = home;
      while (true) {
        try {
          HttpJson signedIn = at.login("t1", subject);
          return new Buyer(signedIn, at == a ? signedIn : a.as(signedIn.token()), failedOver);
        } catch (UncheckedIOException gone) { // its API is gone: at A from now on
          if (System.currentTimeMillis() > deadline) throw gone;
          if (at != a) failedOver.incrementAndGet();
          at = a;
        } catch (IllegalStateException notAnswered) { // e.g. 503: again, same instance
          if (System.currentTimeMillis() > deadline) throw notAnswered;
        }
        RETRIED.incrementAndGet();
        Thread.sleep(300);
      }
    }

    /** Sends until answered: a 503 again after a pause; a refused connection again at A. */
    HttpJson.Reply send(java.util.function.Function<HttpJson, HttpJson.Reply> request) throws InterruptedException {
      long deadline = System.currentTimeMillis() + BUYER_DEADLINE_MS;
      while (true) {
        HttpJson.Reply r;
        try {
          r = request.apply(api);
        } catch (UncheckedIOException | IllegalStateException gone) {
          if (System.currentTimeMillis() > deadline) throw gone;
          if (api != fallback) {
            api = fallback;
            failedOver.incrementAndGet();
          }
          RETRIED.incrementAndGet();
          Thread.sleep(300);
          continue;
        }
        if (r.status() < 500 || System.currentTimeMillis() > deadline) return r;
        RETRIED.incrementAndGet();
        Thread.sleep(300);
      }
    }
  }

  /** CPU nanoseconds so far of each part of the shape. */
  record Cpu(long server, long serverPg, long ordersPg, long service, long self) {
    Cpu minus(Cpu o) {
      return new Cpu(server - o.server, serverPg - o.serverPg, ordersPg - o.ordersPg, service - o.service, self - o.self);
    }
  }

  private Cpu cpu(long serverPid, long serverPgPid, long ordersPg) {
    long jvms = 0;
    for (ChildJvm c : List.of(apiB, worker1, worker2, relay)) jvms += cpuOf(c.pid());
    return new Cpu(cpuOf(serverPid), serverPgPid > 0 ? tree(serverPgPid) : 0,
        tree(ordersPg), jvms, cpuOf(ProcessHandle.current().pid()));
  }

  /** A postmaster with its backends (live ones, and the exited ones it reaped). */
  private static long tree(long pid) {
    long sum = cpuOf(pid);
    for (ProcessHandle child : ProcessHandle.of(pid).map(h -> h.children().toList()).orElse(List.of())) {
      sum += ProcStat.cpuNanos(child.pid()).orElse(0);
    }
    return sum;
  }

  /** A process's CPU so far; a process gone or unreadable fails the figures rather than counting 0. */
  private static long cpuOf(long pid) {
    return ProcStat.cpuNanos(pid).orElseThrow(() -> new AssertionError("no CPU time for pid " + pid));
  }

  private static String randomHex(int bytes) {
    byte[] raw = new byte[bytes];
    new SecureRandom().nextBytes(raw);
    return HexFormat.of().formatHex(raw);
  }
}
