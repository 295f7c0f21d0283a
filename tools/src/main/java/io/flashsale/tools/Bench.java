package io.flashsale.tools;

import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.TemporalEngine;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.tools.bench.CpuSplit;
import io.flashsale.tools.bench.EngineCeiling;
import io.flashsale.tools.bench.JfrSummary;
import io.flashsale.tools.bench.LinePlot;
import io.flashsale.tools.bench.Load;
import io.flashsale.tools.bench.ScenarioResult;
import io.flashsale.tools.bench.ServiceCpu;
import io.flashsale.tools.bench.Stats;
import io.flashsale.tools.bench.SweepPoint;
import io.flashsale.tools.bench.SweepTable;
import io.flashsale.tools.bench.TaskLatencies;
import io.flashsale.tools.bench.ThreadCpu;
import io.flashsale.tools.bench.Wrk;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The bench: this JVM is the service (started by BenchCommand); every scenario runs as
 * `./flashsale load` in a child JVM that talks HTTP to it like any client. Per scenario window
 * the CPU of both sides is measured (client = the load JVM and its pgbench; service = this JVM,
 * PostgreSQL, the Temporal dev server). A warm-up pass first (not reported), then --runs runs,
 * medians, ratios per run, memory after each B1. Broken invariants print "!!" and fail the bench.
 */
final class Bench {
  /** What the bench runs, from the command line. */
  record Options(int runs, int buyers, int units, int concurrency, int jdbcPool, int orders, int stormOrders, int copies,
      int pgbenchSeconds, String loadHeap, boolean profile, Path outDir, String stamp, int sweepRequests,
      int sweepSeconds, List<String> scenarios, boolean fsyncCost, int openLoopSeconds, int crowd, int crowdUnits,
      double arrivalSeconds) {}

  /**
   * One scenario run as the load JVM reported it, with the CPU split over its window and the
   * service's workflow tasks in it (from the SDK's metrics; empty if they could not be read).
   */
  record Measured(ScenarioResult result, CpuSplit cpu, Map<String, TaskLatencies.Timer> tasks) {
    Measured(ScenarioResult result, CpuSplit cpu) {
      this(result, cpu, Map.of());
    }
  }

  static final List<Integer> SWEEP_CLIENTS = List.of(1, 4, 16, 64, 256);
  static final List<Integer> SWEEP_STOCK = List.of(100, 1_000, 10_000);

  private final FlashsaleApplication.Wiring w;
  private final String apiUrl;
  private final String adminUrl;
  /** Reads the service's SDK metrics before and after every scenario. */
  private final HttpJson metricsClient;
  private final Options o;
  private final PrintStream out;
  private final StringBuilder report = new StringBuilder();
  private final ServiceCpu cpu;
  private final int cores = Runtime.getRuntime().availableProcessors();
  private final boolean pgbench = onPath("pgbench");
  private boolean broken;

  /** The orders' worker: the engine ceiling's worker gets the same options and cache size. */
  record OrdersWorker(io.temporal.worker.WorkerFactoryOptions cache, io.temporal.worker.WorkerOptions options) {}

  private final OrdersWorker ordersWorker;

  Bench(FlashsaleApplication.Wiring w, String apiUrl, String adminUrl, Options o, PrintStream out,
      OrdersWorker ordersWorker) {
    this.w = w;
    this.ordersWorker = ordersWorker;
    this.apiUrl = apiUrl;
    this.adminUrl = adminUrl;
    this.metricsClient = new HttpJson(adminUrl, null, Duration.ofSeconds(10));
    this.o = o;
    this.out = out;
    this.cpu = new ServiceCpu(this::postmaster);
  }

  /** The engine ceiling, B1, B1 sold out, the JDBC and pgbench ceilings, B2, B3; returns the exit code. */
  int run() throws Exception {
    header();
    line("params: runs=" + o.runs() + " clients=" + o.concurrency() + " | b1 buyers=" + o.buyers() + " units="
        + (o.units() > 0 ? String.valueOf(o.units()) : 2 * o.buyers() + " (2x, never sells out)") + " | jdbc pool=" + o.jdbcPool() + " | pgbench " + (pgbench ? o.pgbenchSeconds() + " s" : "not on PATH")
        + " | b2 orders=" + o.orders() + " | b3 orders=" + o.stormOrders() + " x " + o.copies() + " copies"
        + " | load JVM -Xmx" + o.loadHeap() + (o.profile() ? " | JFR on" : "") + " | scenarios " + String.join(",", scenarios())
        + (o.fsyncCost() ? " | fsync cost: b1 again with fsync on" : ""));
    StringBuilder kept = new StringBuilder(report);
    line("warm-up (not reported) ...");
    for (String s : scenarios()) load(s, 0, warmUpSizes(s), false);
    report.setLength(0);
    report.append(kept).append("(warm-up run 0 not reported)\n");

    Map<String, List<Double>> medians = new LinkedHashMap<>();
    Map<String, List<Measured>> byScenario = new LinkedHashMap<>();
    for (int r = 1; r <= o.runs(); r++) {
      line("");
      line("run " + r + ":");
      Map<String, Measured> thisRun = new LinkedHashMap<>();
      for (String s : scenarios()) {
        // b1's units (--units) only for the measured runs: the warm-up's SKU is sized to its own buyers
      List<String> sizes = s.equals("b1") && o.units() > 0 ? List.of("--stock", String.valueOf(o.units())) : List.of();
      Measured m = load(s, r, sizes, o.profile());
        thisRun.put(s, m);
        byScenario.computeIfAbsent(s, k -> new ArrayList<>()).add(m);
        collect(medians, m);
        if (s.equals("b1") && !Double.isNaN(m.result().rate())) memory(medians);
      }
      if (scenarios().contains("b1-sold-out")) lightFloors(medians);
      if (scenarios().contains("b3")) lightCallbackCopies(r, medians);
      ratios(thisRun, medians);
      if (o.fsyncCost()) fsyncCost(r, thisRun, byScenario, medians);
    }
    if (o.openLoopSeconds() > 0 && byScenario.containsKey("b1")) {
      openLoop(Stats.median(byScenario.get("b1").stream().map(m -> m.result().rate()).toList()), medians);
    }
    line("");
    line("medians over " + o.runs() + (o.runs() == 1 ? " run:" : " runs:"));
    byScenario.forEach((s, ms) -> line(medianLine(s, ms)));
    medians.forEach((k, v) -> line(Stats.medianLine(k, v)));
    line(broken ? "!! an invariant broke (see the !! lines)" : "invariants held in every run; reconcile clean after every scenario");
    write("bench-" + o.stamp() + ".txt", report.toString());
    return broken ? 1 : 0;
  }

  /**
   * What durability costs: B1 with PostgreSQL as every scratch stack runs it (fsync and
   * full_page_writes off) and again after a restart with both on, as ./flashsale server runs it;
   * PostgreSQL goes back to scratch afterwards. The service rides the restarts as it rides any
   * PostgreSQL outage (between scenarios nothing is in flight).
   */
  private void fsyncCost(int run, Map<String, Measured> thisRun, Map<String, List<Measured>> byScenario,
      Map<String, List<Double>> medians) throws Exception {
    if (w.stack() == null) throw new IllegalStateException("--fsync-cost needs the embedded PostgreSQL");
    List<String> sizes = o.units() > 0 ? List.of("--stock", String.valueOf(o.units())) : List.of();
    Measured off = thisRun.get("b1");
    if (off == null) {
      off = load("b1", run, sizes, o.profile());
      byScenario.computeIfAbsent("b1", k -> new ArrayList<>()).add(off);
    }
    line("  PostgreSQL " + durability(true));
    Measured on;
    try {
      on = load("b1", run, sizes, o.profile());
    } finally {
      line("  PostgreSQL " + durability(false));
    }
    byScenario.computeIfAbsent("b1 fsync on", k -> new ArrayList<>()).add(on);
    put(medians, "b1 fsync on oversell", on.result().metric("oversell"));
    double a = off.result().rate();
    double b = on.result().rate();
    line(String.format("  fsync cost: b1 %.1f %s with fsync off, %.1f with fsync and full_page_writes on%s", a,
        off.result().rateUnit(), b, ratio(a, b) ? String.format(" (off/on = %.2f)", a / b) : ""));
    if (ratio(a, b)) put(medians, "ratio b1 fsync off/on", a / b);
  }

  /** How long each wrk measurement runs. */
  static final int WRK_SECONDS = 10;

  /**
   * The sold-out answer against the same Jetty's trivial answer (the admin port's GET /ping), both
   * from wrk at the same connections in this run: a generator light enough that the ratio is the
   * server's. Without wrk on the PATH this says so and measures nothing.
   */
  private void lightFloors(Map<String, List<Double>> medians) {
    if (!Wrk.onPath()) {
      line("  wrk: not on the PATH (apt-get install wrk): no floor and no light-generator sold-out figure");
      return;
    }
    try {
      wrkFloors(medians);
    } catch (Exception e) { // a measurement that could not run: said, and the bench goes on
      line("  wrk: could not measure the floors: " + e);
    }
  }

  private void wrkFloors(Map<String, List<Double>> medians) throws Exception {
    HttpJson admin = new HttpJson(adminUrl, null, Duration.ofSeconds(30));
    String sku = "bench-wrk-" + o.stamp().replace("-", "") + "-" + System.nanoTime() % 100_000;
    HttpJson.Reply made = admin.post("/tasks/sku?tenant=t1&sku=" + sku + "&total=0&unit_price=1990&per_user_limit=1", null);
    if (made.status() != 200) throw new IllegalStateException("creating " + sku + ": " + made.status() + " " + made.raw());
    String token = new HttpJson(apiUrl, null, Duration.ofSeconds(30)).login("t1", "bench-wrk").token();
    Wrk.Result floor = wrk("floor (wrk GET /ping, admin port)", Wrk.get(adminUrl + "/ping", 200, o.concurrency(),
        WRK_SECONDS), "answer");
    Wrk.Result soldOut = wrk("sold out (wrk POST /orders, 409 SOLD_OUT)", Wrk.create(apiUrl, token, sku, 409,
        o.concurrency(), WRK_SECONDS), "sold-out answer");
    long orders = w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM orders WHERE sku = ?")) {
        ps.setString(1, sku);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
    if (orders != 0) flag(orders + " orders on the wrk SKU that has no stock");
    if (soldOut.otherStatus() > 0 || soldOut.socketErrors() > 0) {
      flag("wrk sold out: " + soldOut.otherStatus() + " answers other than 409, " + soldOut.socketErrors() + " socket errors");
    }
    put(medians, "wrk floor answers/s", floor.rate());
    put(medians, "wrk floor p99 ms", floor.p99Ms());
    put(medians, "wrk sold_out/s", soldOut.rate());
    put(medians, "wrk sold_out p99 ms", soldOut.p99Ms());
    if (ratio(soldOut.rate(), floor.rate())) {
      line(String.format("  ratio sold-out / floor (both wrk) = %.3f", soldOut.rate() / floor.rate()));
      put(medians, "ratio wrk sold_out/floor", soldOut.rate() / floor.rate());
    }
  }

  /** The notices that paid a run's B3 orders (their notify ids begin with Load.stormNotifyIdPrefix). */
  private static final String STORM_NOTICES = "SELECT n.notify_id, n.merchant_order, n.kind, n.amount, n.txn"
      + " FROM payment_notification n WHERE n.effect = 'PAID' AND n.notify_id LIKE ? || '%'"
      + " ORDER BY n.id DESC LIMIT 20";

  /** The arrivals of some orders once wrk's copies were sent; {@code lastId} the newest id before them. */
  private static final String AFTER_COPIES = "SELECT count(*) FILTER (WHERE id > ?),"
      + " count(*) FILTER (WHERE effect IS NULL), count(*) FILTER (WHERE effect = 'PAID'),"
      // answered at arrival: the effect came with the INSERT (applied_at = received_at), and it is a duplicate's
      + " count(*) FILTER (WHERE id > ? AND (applied_at IS DISTINCT FROM received_at OR effect NOT LIKE 'DUPLICATE %')),"
      + " (SELECT count(*) FROM outbox WHERE order_id = ANY (?) AND event_type = 'ORDER_PAID')"
      + " FROM payment_notification WHERE merchant_order = ANY (?)";

  /**
   * A channel's retry storm at its steady state, from wrk: copies of the notices B3's orders
   * applied, signed as the channel signs them, each answered at arrival ({@code DUPLICATE PAID},
   * docs/DESIGN.md §Callbacks). Afterwards every arrival has its effect and each order is still
   * PAID once, with one ORDER_PAID event.
   */
  private void lightCallbackCopies(int run, Map<String, List<Double>> medians) {
    if (!Wrk.onPath()) {
      line("  wrk: not on the PATH: no light-generator figure for callback copies");
      return;
    }
    try {
      wrkCallbackCopies(run, medians);
    } catch (Exception e) {
      line("  wrk: could not measure the callback copies: " + e);
    }
  }

  private void wrkCallbackCopies(int run, Map<String, List<Double>> medians) throws Exception {
    List<Map<String, Object>> notices = w.db().read(c -> {
      List<Map<String, Object>> rows = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(STORM_NOTICES)) {
        ps.setString(1, Load.stormNotifyIdPrefix(run));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("notify_id", rs.getString(1));
            n.put("merchant_order", rs.getString(2));
            n.put("kind", rs.getString(3));
            n.put("amount", rs.getLong(4));
            n.put("txn", rs.getString(5));
            rows.add(n);
          }
        }
      }
      return rows;
    });
    if (notices.isEmpty()) {
      line("  wrk: no applied B3 notice to copy");
      return;
    }
    List<String> orders = notices.stream().map(n -> (String) n.get("merchant_order")).toList();
    String secret = w.callbackSecret();
    long now = System.currentTimeMillis() / 1000; // the signatures stay valid for 300 s, the run takes 10
    List<Wrk.SignedCallback> copies = new ArrayList<>();
    for (Map<String, Object> n : notices) copies.add(Wrk.SignedCallback.of(HttpJson.JSON.writeValueAsString(n), secret, now));
    long lastId = w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT coalesce(max(id), 0) FROM payment_notification WHERE merchant_order = ANY (?)")) {
        ps.setArray(1, c.createArrayOf("text", orders.toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
    Wrk.Result r = wrk("callback copies (wrk POST /callbacks/payment, " + notices.size() + " applied notices, answered at arrival)",
        Wrk.callbacks(apiUrl, copies, 200, o.concurrency(), WRK_SECONDS), "callback copy");
    long[] after = w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(AFTER_COPIES)) {
        java.sql.Array ids = c.createArrayOf("text", orders.toArray());
        ps.setLong(1, lastId);
        ps.setLong(2, lastId);
        ps.setArray(3, ids);
        ps.setArray(4, ids);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)};
        }
      }
    });
    long recorded = after[0];
    long waiting = after[1];
    long paidEffects = after[2];
    long notAtArrival = after[3];
    long paidEvents = after[4];
    line(String.format("    %d arrivals recorded for %d answers, %d without an effect, %d not answered at arrival;"
        + " PAID effects %d and ORDER_PAID events %d for %d orders",
        recorded, r.expectedStatus(), waiting, notAtArrival, paidEffects, paidEvents, orders.size()));
    if (notAtArrival > 0) flag(notAtArrival + " copies of an applied notice were not answered at arrival");
    if (r.otherStatus() > 0 || r.socketErrors() > 0) {
      flag("wrk callback copies: " + r.otherStatus() + " answers other than 200, " + r.socketErrors() + " socket errors");
    }
    if (recorded < r.expectedStatus()) flag((r.expectedStatus() - recorded) + " answered callback copies without an arrival row");
    if (waiting > 0) flag(waiting + " callback copies still without an effect after wrk");
    if (paidEffects != orders.size() || paidEvents != orders.size()) {
      flag("callback copies: " + paidEffects + " PAID effects and " + paidEvents + " ORDER_PAID events for " + orders.size() + " orders");
    }
    put(medians, "wrk callback copies/s", r.rate());
    put(medians, "wrk callback copy p99 ms", r.p99Ms());
  }

  private Wrk.Result wrk(String what, Process p, String operation) throws Exception {
    CpuSplit.Sample start = cpu.sample(p.toHandle());
    Wrk.Result r;
    try {
      r = Wrk.finish(p);
    } finally {
      p.destroyForcibly(); // gone already, unless finish failed
    }
    CpuSplit.Sample after = cpu.sample(p.toHandle()); // wrk has exited: its CPU is the one it reported
    CpuSplit split = CpuSplit.between(start, new CpuSplit.Sample(after.wallNanos(), after.parts(),
        start.clientNanos() + (Double.isNaN(r.cpuSeconds()) ? 0 : (long) (r.cpuSeconds() * 1e9))), cores);
    line(String.format("  %s: %.1f/s, p50 / p99 %.2f / %.2f ms, %d requests (%d other status, %d socket errors)", what,
        r.rate(), r.p50Ms(), r.p99Ms(), r.requests(), r.otherStatus(), r.socketErrors()));
    line("    " + split.perOperationLine(operation, r.expectedStatus()));
    return r;
  }

  /** Arrival rates of the open-loop B1, as multiples of the capacity the closed-loop B1 measured. */
  static final List<Double> OPEN_LOOP_LOAD = List.of(0.5, 0.8, 1.0, 1.5);

  /**
   * CREATED latency when buyers arrive at a fixed rate (not 64 clients that wait for each other):
   * B1 as an open loop at each multiple of the measured capacity, --open-loop-seconds each. Below
   * capacity the latency is the service's own; above it, what overload does to it.
   */
  private void openLoop(double capacity, Map<String, List<Double>> medians) throws Exception {
    if (Double.isNaN(capacity) || capacity <= 0) return;
    line("");
    awaitReservationsEnded();
    line(String.format("open loop: b1 at %s x the capacity of %.1f created/s, %d s each", OPEN_LOOP_LOAD, capacity,
        o.openLoopSeconds()));
    for (double f : OPEN_LOOP_LOAD) {
      double rate = f * capacity;
      int n = Math.max(50, (int) Math.round(rate * o.openLoopSeconds()));
      Measured m = load("b1", 1, List.of("--rate", String.format(java.util.Locale.ROOT, "%.3f", rate), "--buyers",
          String.valueOf(n), "--max-seconds", String.valueOf(2 * o.openLoopSeconds() + 30)), false);
      ScenarioResult r = m.result();
      String refusals = Double.isNaN(r.metric("overloaded p99 ms")) ? ""
          : String.format(", 503 OVERLOADED p50 / p99 %.0f / %.0f ms", r.metric("overloaded p50 ms"),
              r.metric("overloaded p99 ms"));
      line(String.format("  %.1f x capacity (%.1f arrivals/s): created/s %.1f, CREATED p50 / p99 %.0f / %.0f ms%s, outcomes %s",
          f, rate, r.rate(), r.p50Ms(), r.p99Ms(), refusals, r.outcomes()));
      TaskLatencies.Timer queued = m.tasks().get(TaskLatencies.QUEUED);
      if (queued != null) {
        put(medians, String.format(java.util.Locale.ROOT, "open loop %.1fx task queued mean ms", f), queued.meanMs());
      }
      put(medians, String.format(java.util.Locale.ROOT, "open loop %.1fx created p99 ms", f), r.p99Ms());
      put(medians, String.format(java.util.Locale.ROOT, "open loop %.1fx overloaded p99 ms", f), r.metric("overloaded p99 ms"));
    }
  }

  /** The SDK's metrics of this JVM's worker, from the admin port; null when they cannot be read. */
  private TaskLatencies.Scrape sdkMetrics() {
    try {
      HttpJson.Reply r = metricsClient.get(io.flashsale.launcher.observe.SdkMetrics.PATH);
      return r.status() == 200 ? TaskLatencies.parse(r.raw()) : null;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Longer than the reservation TTL of the bench's stack (60 s) and the expiry work after it. */
  static final Duration RESERVATIONS_END_AT_MOST = Duration.ofSeconds(150);

  /**
   * Waits until no order of an earlier scenario still holds its reservation (status CREATED), at
   * most {@link #RESERVATIONS_END_AT_MOST}, then for the engine to go quiet: the open loop measures
   * latency, and the expiry of B4's 500 units or B1's 2 000 would otherwise run among its arrivals.
   */
  private void awaitReservationsEnded() throws InterruptedException {
    long t0 = System.nanoTime();
    long held;
    while ((held = reservationsHeld()) > 0 && System.nanoTime() - t0 < RESERVATIONS_END_AT_MOST.toNanos()) {
      Thread.sleep(1_000);
    }
    line(String.format("  (before the open loop: %d orders still CREATED after %.0f s)", held, (System.nanoTime() - t0) / 1e9));
    settle("the earlier scenarios' expiries");
  }

  private long reservationsHeld() {
    return w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM orders WHERE status = 'CREATED'");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    });
  }

  /** Restarts PostgreSQL with fsync and full_page_writes on or off; what it then shows. */
  private String durability(boolean durable) throws Exception {
    io.flashsale.devstack.EmbeddedStack.of(w.stack()).postgres().restartWith(durable);
    return "restarted: " + w.db().read(c -> {
      StringBuilder sb = new StringBuilder();
      for (String setting : List.of("fsync", "full_page_writes", "synchronous_commit")) {
        try (PreparedStatement ps = c.prepareStatement("SHOW " + setting); ResultSet rs = ps.executeQuery()) {
          rs.next();
          sb.append(sb.length() == 0 ? "" : ", ").append(setting).append('=').append(rs.getString(1));
        }
      }
      return sb.toString();
    });
  }

  /** B1 and B2 over clients x stock, beside the JDBC ceiling at the same clients; returns the exit code. */
  int sweep() throws Exception {
    header();
    line("sweep: clients " + SWEEP_CLIENTS + " x stock " + SWEEP_STOCK + ", each point <= " + o.sweepRequests()
        + " requests or " + o.sweepSeconds() + " s; JDBC ceiling pool=" + o.jdbcPool());
    load("b1", 0, warmUpSizes("b1"), false);
    load("b2", 0, warmUpSizes("b2"), false);
    List<SweepPoint> points = new ArrayList<>();
    String n = String.valueOf(o.sweepRequests());
    String secs = String.valueOf(o.sweepSeconds());
    for (int clients : SWEEP_CLIENTS) {
      String c = String.valueOf(clients);
      ScenarioResult jdbc = load("jdbc", 1, List.of("--concurrency", c, "--buyers", n, "--max-seconds", secs,
          "--skip-reconcile"), false).result();
      for (int stock : SWEEP_STOCK) {
        String s = String.valueOf(stock);
        ScenarioResult b1 = load("b1", 1, List.of("--concurrency", c, "--buyers", n, "--stock", s, "--max-seconds",
            secs, "--skip-reconcile"), false).result();
        points.add(new SweepPoint(clients, stock, "b1", b1.requests(), b1.rate(), b1.metric("sold_out/s"), b1.p50Ms(),
            b1.p99Ms(), jdbc.rate()));
        int orders = Math.min(stock, o.sweepRequests());
        ScenarioResult b2 = load("b2", 1, List.of("--concurrency", c, "--orders", String.valueOf(orders), "--stock", s,
            "--max-seconds", secs, "--skip-reconcile"), false).result();
        points.add(new SweepPoint(clients, stock, "b2", b2.requests(), b2.rate(), Double.NaN, b2.p50Ms(), b2.p99Ms(),
            jdbc.rate()));
      }
    }
    Load.Reconciled rec = Load.reconcile(new HttpJson(adminUrl, null, Load.RECONCILE_TIMEOUT), Duration.ofSeconds(120));
    line("reconcile after the sweep: " + rec.verdict());
    if (!rec.clean()) flag("reconcile not clean after the sweep");
    String table = "# flashsale sweep " + o.stamp() + "\n\n" + report + "\n" + SweepTable.markdown(points)
        + "\nb1: throughput = created/s (sold-out/s beside it once the stock is gone); b2: PAID orders/s, p50/p99 of the"
        + " pay call. JDBC ceiling: the same admission transaction over JDBC at the same clients.\n";
    write("sweep-" + o.stamp() + ".md", table);
    out.println(SweepTable.markdown(points));
    Path png = o.outDir().resolve("sweep-" + o.stamp() + ".png");
    LinePlot.write(png, "flashsale sweep, " + w.engine().configName() + " engine, 2 cores: B1 admission and B2 end to end",
        List.of(panel("throughput vs clients", "per second", false, SweepTable.series(points, false)),
            panel("p99 latency vs clients", "p99 ms (log)", true, SweepTable.series(points, true))),
        1600, 600);
    out.println("written to " + png);
    return broken ? 1 : 0;
  }

  /** The scenarios of --scenarios (all by default) in their usual order; pgbench only when it is on the PATH. */
  private List<String> scenarios() {
    List<String> s = new ArrayList<>();
    for (String x : LoadCommand.SCENARIOS) {
      if (!o.scenarios().isEmpty() && !o.scenarios().contains(x)) continue;
      if (x.equals("pgbench") && !pgbench) continue;
      s.add(x);
    }
    return s;
  }

  /**
   * One scenario's medians over the runs: rate, p50, p99, and the CPU-milliseconds per successful
   * operation of each service part and of the client; what no run measured is left out.
   */
  static String medianLine(String scenario, List<Measured> runs) {
    List<Double> rate = new ArrayList<>();
    List<Double> p50 = new ArrayList<>();
    List<Double> p99 = new ArrayList<>();
    List<Map<String, Double>> perOp = new ArrayList<>();
    String unit = null;
    for (Measured m : runs) {
      ScenarioResult r = m.result();
      rate.add(r.rate());
      p50.add(r.p50Ms());
      p99.add(r.p99Ms());
      if (!Double.isNaN(r.rate())) unit = r.rateUnit();
      if (m.cpu() != null) perOp.add(m.cpu().msPerOperation(r.successes()));
    }
    StringBuilder sb = new StringBuilder(String.format("  %-12s", scenario));
    double medianRate = Stats.median(rate);
    sb.append(Double.isNaN(medianRate) ? "no rate (no run finished)" : String.format("%.1f %s", medianRate, unit));
    double m50 = Stats.median(p50);
    if (!Double.isNaN(m50)) sb.append(String.format(", p50 %.1f ms, p99 %.1f ms", m50, Stats.median(p99)));
    Map<String, Double> cpuPerOp = Stats.medianByKey(perOp);
    if (!cpuPerOp.isEmpty()) {
      // the label may name a variant (b1 fsync on): the operation is its scenario's
      String operation = ScenarioResult.operation(runs.isEmpty() ? scenario : runs.get(0).result().scenario());
      sb.append("; ").append(CpuSplit.perOperationLine(operation, cpuPerOp));
    }
    return sb.toString();
  }

  /** Small sizes for the warm-up pass (JIT, pools and caches on both sides), never above the measured ones. */
  private List<String> warmUpSizes(String scenario) {
    return switch (scenario) {
      case "engine", "b1", "b1-sold-out", "jdbc" -> List.of("--buyers", String.valueOf(Math.min(500, o.buyers())));
      case "pgbench" -> List.of("--pgbench-seconds", String.valueOf(Math.min(2, o.pgbenchSeconds())));
      case "b2" -> List.of("--orders", String.valueOf(Math.min(100, o.orders())));
      case "b3" -> List.of("--storm-orders", String.valueOf(Math.min(5, o.stormOrders())), "--copies",
          String.valueOf(Math.min(10, o.copies())));
      case "b4" -> List.of("--crowd", String.valueOf(Math.min(500, o.crowd())), "--crowd-units",
          String.valueOf(Math.min(25, o.crowdUnits())));
      default -> List.of();
    };
  }

  // ---------------------------------------------------------------- the load JVM

  /** Runs one scenario in a child JVM; samples CPU (and records JFR) between its MARK lines. */
  private Measured load(String scenario, int run, List<String> overrides, boolean profile) throws Exception {
    List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx" + o.loadHeap()));
    if (profile) {
      cmd.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
          + jfrFile("load-" + scenario + "-r" + run).toAbsolutePath());
      cmd.add("-Xlog:jfr+startup=warning"); // its banner would land among the load's output lines
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), FlashsaleApplication.class.getName(), "load",
        "--scenario", scenario, "--run", String.valueOf(run), "--api", apiUrl, "--admin", adminUrl,
        "--channel", w.channelUrl(), "--database-url", w.jdbcUrl(), "--concurrency", String.valueOf(o.concurrency()),
        "--buyers", String.valueOf(o.buyers()), "--jdbc-pool", String.valueOf(o.jdbcPool()),
        "--orders", String.valueOf(o.orders()), "--storm-orders", String.valueOf(o.stormOrders()),
        "--copies", String.valueOf(o.copies()), "--pgbench-seconds", String.valueOf(o.pgbenchSeconds()),
        "--crowd", String.valueOf(o.crowd()), "--crowd-units", String.valueOf(o.crowdUnits()),
        "--arrival-seconds", String.valueOf(o.arrivalSeconds()),
        "--temporal", w.temporal().service().getOptions().getTarget(),
        "--namespace", w.temporal().client().getOptions().getNamespace()));
    if (scenario.equals("engine")) cmd.add("--skip-reconcile"); // it makes no order: nothing to reconcile
    cmd.addAll(overrides); // argparse keeps the last of a repeated option
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    if (w.callbackSecret() != null) pb.environment().put("FLASHSALE_CALLBACK_SECRET", w.callbackSecret());
    pb.environment().put("FLASHSALE_CHANNEL_MERCHANT_KEY", w.merchantKey());
    // the ceiling's worker only while its scenario runs: its cache of terminated runs goes with it
    io.temporal.worker.WorkerFactory ceiling = scenario.equals("engine")
        ? EngineCeiling.startWorker(w.temporal().client(), ordersWorker.cache(), ordersWorker.options()) : null;
    try {
      return loadWith(pb, scenario, run, profile);
    } finally {
      if (ceiling != null) {
        ceiling.shutdownNow();
        ceiling.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
      }
    }
  }

  private Measured loadWith(ProcessBuilder pb, String scenario, int run, boolean profile) throws Exception {
    Process child = pb.start();
    ProcessHandle handle = child.toHandle();
    CpuSplit.Sample start = null;
    CpuSplit.Sample end = null;
    ThreadCpu.Sample threadsAtStart = null;
    ThreadCpu.Sample threadsAtEnd = null;
    TaskLatencies.Scrape tasksAtStart = null;
    TaskLatencies.Scrape tasksAtEnd = null;
    ScenarioResult result = null;
    jdk.jfr.Recording recording = null;
    try (BufferedReader lines = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
      for (String l = lines.readLine(); l != null; l = lines.readLine()) {
        if (l.equals(Load.MARK_START)) {
          if (profile) recording = startRecording();
          // first, so no task the window's first milliseconds finish falls between the samples
          tasksAtStart = sdkMetrics();
          start = cpu.sample(handle);
          threadsAtStart = ThreadCpu.sample();
        } else if (l.equals(Load.MARK_END)) {
          end = cpu.sample(handle);
          threadsAtEnd = ThreadCpu.sample();
          tasksAtEnd = sdkMetrics();
          if (recording != null) dump(recording, "service-" + scenario + "-r" + run);
          recording = null;
        } else if (l.startsWith(ScenarioResult.PREFIX)) {
          result = ScenarioResult.parse(l).orElseThrow();
        } else if (run > 0) {
          line(l.startsWith("  ") ? l : "  " + l);
        } else {
          out.println("  (warm-up) " + l);
        }
      }
    } finally {
      if (recording != null) recording.close();
    }
    int code = child.waitFor();
    settle(scenario);
    if (result == null) { // the load JVM died: say so and go on with the other scenarios
      result = ScenarioResult.aborted(scenario, run, o.concurrency(), "LOAD_EXIT_" + code,
          "load " + scenario + " printed no RESULT (exit " + code + ")");
    }
    CpuSplit split = start == null || end == null ? null : CpuSplit.between(start, end, cores);
    if (split != null && run > 0) {
      line("    " + split.line());
      line("    " + split.perOperationLine(ScenarioResult.operation(scenario), result.successes()));
      line("    " + ThreadCpu.perOperationLine(ScenarioResult.operation(scenario),
          ThreadCpu.between(threadsAtStart, threadsAtEnd), result.successes()));
    }
    boolean scraped = tasksAtStart != null && tasksAtEnd != null;
    Map<String, TaskLatencies.Timer> tasks = scraped ? TaskLatencies.between(tasksAtStart, tasksAtEnd) : Map.of();
    if (split != null && run > 0) {
      line("    the service's workflow tasks, mean / p99 ms (count): " + (scraped ? TaskLatencies.describe(tasks)
          : "not known, the SDK's metrics could not be read from " + io.flashsale.launcher.observe.SdkMetrics.PATH));
    }
    if (!result.ok()) flag(scenario + (run == 0 ? " warm-up" : " run " + run) + " broke an invariant: " + result.broken());
    return new Measured(result, split, tasks);
  }

  /** The engine and PostgreSQL count as quiet below this share of one core. */
  static final double QUIET_SHARE = 0.15;
  static final Duration SETTLE_AT_MOST = Duration.ofSeconds(90);

  /**
   * Waits until the engine and PostgreSQL are quiet (below {@link #QUIET_SHARE} of a core over a
   * second), at most {@link #SETTLE_AT_MOST}: what a scenario left behind (the engine ceiling's
   * terminations and their visibility work, B3's notices) is not charged to the next one. Timers
   * of orders still open (their reservations, late-notice windows) may keep it from quieting down;
   * then the next scenario runs beside them, and the line says so. The in-memory engine runs in
   * this JVM, whose CPU this does not watch: there only PostgreSQL is waited for.
   */
  private void settle(String after) throws InterruptedException {
    long t0 = System.nanoTime();
    while (System.nanoTime() - t0 < SETTLE_AT_MOST.toNanos()) {
      CpuSplit.Sample a = cpu.sample(null);
      Thread.sleep(1_000);
      CpuSplit.Sample b = cpu.sample(null);
      double busy = 0;
      for (String part : List.of(CpuSplit.TEMPORAL, CpuSplit.POSTGRES)) {
        busy += b.parts().getOrDefault(part, 0L) - a.parts().getOrDefault(part, 0L);
      }
      double share = busy / (b.wallNanos() - a.wallNanos());
      if (share < QUIET_SHARE) {
        out.println(String.format("  (settled after %s in %.0f s: engine + PostgreSQL at %.0f %% of a core)", after,
            (System.nanoTime() - t0) / 1e9, 100 * share));
        return;
      }
    }
    line(String.format("  (after %s the engine and PostgreSQL stayed above %.0f %% of a core for %d s: the next"
        + " scenario runs beside that work)", after, 100 * QUIET_SHARE, SETTLE_AT_MOST.toSeconds()));
  }

  private jdk.jfr.Recording startRecording() throws Exception {
    jdk.jfr.Recording r = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration("profile"));
    r.start();
    return r;
  }

  private void dump(jdk.jfr.Recording r, String name) throws IOException {
    r.stop();
    Path f = jfrFile(name);
    r.dump(f);
    r.close();
    line("    JFR " + f + " (summary: " + summarise(f).getFileName() + ")");
  }

  /** The recording as text beside it (the .jfr itself is never committed). */
  private static Path summarise(Path jfr) throws IOException {
    Path txt = jfr.resolveSibling(jfr.getFileName().toString().replaceAll("\\.jfr$", ".txt"));
    Files.writeString(txt, JfrSummary.summarise(jfr));
    return txt;
  }

  private static LinePlot.Panel panel(String title, String yLabel, boolean logY, Map<String, List<double[]>> series) {
    List<LinePlot.Series> lines = new ArrayList<>();
    series.forEach((name, pts) -> lines.add(new LinePlot.Series(name, pts, name.startsWith("JDBC"))));
    return new LinePlot.Panel(title, "clients (log)", yLabel, true, logY, lines);
  }

  private Path jfrFile(String name) throws IOException {
    Files.createDirectories(o.outDir());
    return o.outDir().resolve("profile-" + name + "-" + o.stamp() + ".jfr");
  }

  // ---------------------------------------------------------------- what the report adds

  private void collect(Map<String, List<Double>> m, Measured x) {
    ScenarioResult r = x.result(); // rate, p50, p99 and CPU per operation: in each scenario's median line
    if (r.scenario().equals("b1")) put(m, "b1 oversell", r.metric("oversell"));
    if (r.scenario().equals("b3")) put(m, "b3 applied notices/s", r.metric("applied notices/s"));
    if (r.scenario().equals("b4")) {
      for (String k : List.of("oversell", "503 answers", "retries", "CREATED p99 ms", "SOLD_OUT p99 ms")) {
        put(m, "b4 " + k, r.metric(k));
      }
      r.metrics().forEach((k, v) -> {
        if (k.startsWith("units to the first")) put(m, "b4 " + k, v);
      });
    }
    if (x.cpu() != null) {
      put(m, r.scenario() + " client cpu %", 100 * x.cpu().clientShare());
      put(m, r.scenario() + " service cpu %", 100 * x.cpu().serviceShare());
      x.cpu().serviceParts().forEach((p, sec) -> put(m, r.scenario() + " " + p + " cpu %", 100 * x.cpu().share(sec)));
    }
  }

  /** The service against the ceilings, for the ones this run has (--scenarios may leave some out). */
  private void ratios(Map<String, Measured> run, Map<String, List<Double>> m) {
    double b1 = rate(run, "b1");
    double jdbc = rate(run, "jdbc");
    double pg = rate(run, "pgbench");
    double engine = rate(run, "engine");
    double b2 = rate(run, "b2");
    List<String> parts = new ArrayList<>();
    addRatio(parts, m, "b1/engine", b1, engine);
    addRatio(parts, m, "b2/engine", b2, engine);
    Measured b4 = run.get("b4");
    if (b4 != null && ratio(b4.result().rate(), engine)) {
      // the crowd's bound: its units at the engine's pace, after the arrivals
      double bound = o.crowdUnits() / engine + o.arrivalSeconds();
      parts.add(String.format("b4 last answer %.1f s (bound units/engine + arrival = %.1f s)", b4.result().rate(), bound));
      put(m, "b4 last answer / bound", b4.result().rate() / bound);
    }
    addRatio(parts, m, "b1/jdbc", b1, jdbc);
    addRatio(parts, m, "b1/pgbench", b1, pg);
    if (ratio(jdbc, pg)) parts.add(String.format("jdbc/pgbench = %.3f", jdbc / pg));
    if (!parts.isEmpty()) line("  ratio " + String.join(", ", parts));
  }

  private static double rate(Map<String, Measured> run, String scenario) {
    Measured m = run.get(scenario);
    return m == null ? Double.NaN : m.result().rate();
  }

  private static boolean ratio(double a, double b) {
    return !Double.isNaN(a) && !Double.isNaN(b) && b > 0;
  }

  /** Prints "name = a/b" and records it as "ratio name", when both were measured. */
  private static void addRatio(List<String> parts, Map<String, List<Double>> m, String name, double a, double b) {
    if (!ratio(a, b)) return;
    parts.add(String.format("%s = %.3f", name, a / b));
    put(m, "ratio " + name, a / b);
  }

  /** Heap after a full GC (this JVM is the service) and what the service keeps open after B1. */
  private void memory(Map<String, List<Double>> m) {
    System.gc();
    System.gc();
    long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    OpenRuns open = openRuns();
    line(String.format("    memory after b1: heap used after full GC %.1f MiB; %d of the %d orders' runs open (asked of"
        + " the engine one by one), %d orders not final", used / 1048576.0, open.running(), open.orders(), openOrders()));
    put(m, "heap after b1 MiB", used / 1048576.0);
    put(m, "open runs after b1", (double) open.running());
  }

  /** Of the orders' workflows (one per order), how many runs are open. */
  record OpenRuns(long orders, long running) {}

  /**
   * Describes each order's workflow: the engine's own state, not visibility, which lags behind a
   * crowd by minutes (the dev server's count said 0 with 1 990 reservations held).
   */
  private OpenRuns openRuns() {
    List<String> ids = w.db().read(c -> {
      List<String> out = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT workflow_id FROM orders");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.add(rs.getString(1));
      }
      return out;
    });
    var stub = w.temporal().service().blockingStub();
    String namespace = w.temporal().client().getOptions().getNamespace();
    long running = ids.parallelStream().filter(id -> {
      try {
        return stub.describeWorkflowExecution(
                io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest.newBuilder().setNamespace(namespace)
                    .setExecution(io.temporal.api.common.v1.WorkflowExecution.newBuilder().setWorkflowId(id)).build())
            .getWorkflowExecutionInfo().getStatus()
            == io.temporal.api.enums.v1.WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
      } catch (io.grpc.StatusRuntimeException e) {
        if (e.getStatus().getCode() == io.grpc.Status.Code.NOT_FOUND) return false; // past retention: not open
        throw e;
      }
    }).count();
    return new OpenRuns(ids.size(), running);
  }

  private long openOrders() {
    return w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT count(*) FROM orders WHERE status NOT IN ('PAID', 'FAILED', 'CANCELLED', 'REFUNDED')");
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    });
  }

  private void header() {
    line("# flashsale bench " + java.time.Instant.now());
    line("machine: " + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", " + cores + " cores, "
        + System.getProperty("java.vm.name") + " " + System.getProperty("java.version") + ", service max heap "
        + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB");
    line("engine: " + w.engine().configName() + " | stack: embedded PostgreSQL + Temporal " + w.engine().configName()
        + " + channel stub + API in the service JVM; load in a child JVM over HTTP");
    line("service CPU = " + cpu.describe() + "; client CPU = the load JVM (+ pgbench); shares of " + cores
        + " cores x wall time");
    line("PostgreSQL: " + (w.stack() == null ? "external"
        : w.stack().postgresDurable() ? "fsync and full_page_writes on (durable)"
        : "fsync and full_page_writes off (a scratch stack; --fsync-cost measures b1 with them on too)"));
    line("service log: WARNs of " + BenchCommand.CANCELLED_PROMISES_LOGGER + " (a stack trace per cancelled timer"
        + " promise) are off during the bench");
  }

  /** PostgreSQL's postmaster (from its pid file): zonky's pg_ctl may leave it outside this JVM's tree. */
  private List<ProcessHandle> postmaster() {
    if (w.stack() == null) return List.of();
    try {
      String first = Files.readAllLines(w.stack().postgresDir().toPath().resolve("postmaster.pid")).get(0).trim();
      return ProcessHandle.of(Long.parseLong(first)).map(List::of).orElse(List.of());
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }

  private void flag(String what) {
    broken = true;
    line("  !! " + what);
  }

  private void write(String name, String text) throws IOException {
    Files.createDirectories(o.outDir());
    Path f = o.outDir().resolve(name);
    Files.writeString(f, text);
    out.println("\nwritten to " + f);
  }

  private static boolean onPath(String program) {
    String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) return true;
    }
    return false;
  }

  /** A figure nobody measured (NaN) is left out: the median is over the runs that had it. */
  private static void put(Map<String, List<Double>> m, String k, double v) {
    if (Double.isNaN(v)) return;
    m.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
  }

  private void line(String s) {
    report.append(s).append('\n');
    out.println(s);
  }
}
