package io.flashsale.tools;

import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.tools.bench.Charts;
import io.flashsale.tools.bench.CpuSplit;
import io.flashsale.tools.bench.EngineComparison;
import io.flashsale.tools.bench.Load;
import io.flashsale.tools.bench.ScenarioResult;
import io.flashsale.tools.bench.ServiceCpu;
import io.flashsale.tools.bench.Stats;
import io.flashsale.tools.bench.SweepPoint;
import io.flashsale.tools.bench.SweepTable;
import io.flashsale.tools.bench.TaskLatencies;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
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
      double arrivalSeconds, int stormBuyers) {}

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
  private final Options o;
  private final PrintStream out;
  private final BenchReport report;
  private final ServiceCpu cpu;
  private final int cores = Runtime.getRuntime().availableProcessors();
  private final boolean pgbench = onPath("pgbench");
  /** Runs each scenario in its child JVM and measures its window. */
  private final LoadJvm jvm;
  private final WrkFigures wrk;

  /** The orders' worker: the engine ceiling's worker gets the same options and cache size. */
  record OrdersWorker(io.temporal.worker.WorkerFactoryOptions cache, io.temporal.worker.WorkerOptions options) {}

  private final OrdersWorker ordersWorker;
  /** The production shape's engine this service runs on (--cluster), or null. */
  private final ProductionShape shape;
  /** --cluster: the report of the same bench on the dev server, run before this one; else null. */
  private final String devServerReport;

  Bench(FlashsaleApplication.Wiring w, String apiUrl, String adminUrl, Options o, PrintStream out,
      OrdersWorker ordersWorker) {
    this(w, apiUrl, adminUrl, o, out, ordersWorker, null, null);
  }

  Bench(FlashsaleApplication.Wiring w, String apiUrl, String adminUrl, Options o, PrintStream out,
      OrdersWorker ordersWorker, ProductionShape shape, String devServerReport) {
    this.w = w;
    this.ordersWorker = ordersWorker;
    this.shape = shape;
    this.devServerReport = devServerReport;
    this.apiUrl = apiUrl;
    this.adminUrl = adminUrl;
    this.o = o;
    this.out = out;
    this.cpu = shape == null ? new ServiceCpu(this::postmaster) : new ServiceCpu(this::postmaster, shape::engineDatabase);
    this.report = new BenchReport(out);
    this.jvm = new LoadJvm(w, apiUrl, adminUrl, o, report, cpu, cores, ordersWorker,
        shape == null ? Map.of() : shape.loadEnvironment());
    this.wrk = new WrkFigures(w, apiUrl, adminUrl, o, report, cpu, cores);
  }

  /** The engine ceiling, B1, B1 sold out, the JDBC and pgbench ceilings, B2, B3; returns the exit code. */
  int run() throws Exception {
    header();
    line("params: runs=" + o.runs() + " clients=" + o.concurrency() + " | storms' distinct buyers=" + o.stormBuyers()
        + " | b1 requests=" + o.buyers() + " units="
        + (o.units() > 0 ? String.valueOf(o.units()) : 2 * o.buyers() + " (2x, never sells out)") + " | jdbc pool=" + o.jdbcPool() + " | pgbench " + (pgbench ? o.pgbenchSeconds() + " s" : "not on PATH")
        + " | b2 orders=" + o.orders() + " | b3 orders=" + o.stormOrders() + " x " + o.copies() + " copies"
        + " | load JVM -Xmx" + o.loadHeap() + (o.profile() ? " | JFR on" : "") + " | scenarios " + String.join(",", scenarios())
        + (o.fsyncCost() ? " | fsync cost: b1 again with fsync on" : ""));
    Map<String, List<Double>> medians = new LinkedHashMap<>();
    boolean firstMinute = scenarios().contains("b1-sold-out") || scenarios().contains("b1") && o.openLoopSeconds() > 0;
    ScenarioResult firstOpen = null;
    if (firstMinute) {
      // the service as it just started, before the bench's warm-up: what the first buyers of a sale meet
      line("the first minute after start (before the warm-up):");
      if (scenarios().contains("b1-sold-out")) wrk.lightFloors(medians, "first minute ");
      if (scenarios().contains("b1") && o.openLoopSeconds() > 0) {
        firstOpen = halfCapacityLoop("first minute ", medians);
        awaitReservationsEnded(); // its orders expire before the warm-up, not among run 1's
      }
    }
    String kept = report.text();
    line("warm-up (not reported) ...");
    for (String s : scenarios()) jvm.load(s, 0, warmUpSizes(s), false);
    report.replaceWith(kept + "(warm-up run 0 not reported)\n");

    Map<String, List<Measured>> byScenario = new LinkedHashMap<>();
    for (int r = 1; r <= o.runs(); r++) {
      line("");
      line("run " + r + ":");
      Map<String, Measured> thisRun = new LinkedHashMap<>();
      for (String s : scenarios()) {
        // b1's units (--units) only for the measured runs: the warm-up's SKU is sized to its own buyers
      List<String> sizes = s.equals("b1") && o.units() > 0 ? List.of("--stock", String.valueOf(o.units())) : List.of();
      Measured m = jvm.load(s, r, sizes, o.profile());
        thisRun.put(s, m);
        byScenario.computeIfAbsent(s, k -> new ArrayList<>()).add(m);
        collect(medians, m);
        if (s.equals("b1") && !Double.isNaN(m.result().rate())) memory(medians);
      }
      if (scenarios().contains("b1-sold-out")) wrk.lightFloors(medians);
      if (scenarios().contains("b1")) {
        // the storms meet the open orders they make themselves, not the expiry of b1's
        awaitReservationsEnded();
        wrk.createStorms(medians, "");
      }
      if (scenarios().contains("b3")) wrk.lightCallbackCopies(r, medians);
      ratios(thisRun, medians);
      if (o.fsyncCost()) fsyncCost(r, thisRun, byScenario, medians);
    }
    if (o.openLoopSeconds() > 0 && byScenario.containsKey("b1")) {
      openLoop(Stats.median(byScenario.get("b1").stream().map(m -> m.result().rate()).toList()), medians);
      awaitReservationsEnded();
      ScenarioResult warmOpen = halfCapacityLoop("warm ", medians);
      if (firstOpen != null && BenchReport.ratio(firstOpen.p99Ms(), warmOpen.p99Ms())) {
        double r = firstOpen.p99Ms() / warmOpen.p99Ms();
        line(String.format("  first minute / warm, CREATED p99 at %.0f arrivals/s: %.0f / %.0f ms = %.2f (target <= 2, %s)",
            FIRST_MINUTE_RATE, firstOpen.p99Ms(), warmOpen.p99Ms(), r, r <= 2 ? "met" : "not met"));
        put(medians, "ratio first minute / warm created p99", r);
      }
    }
    line("");
    line("medians over " + o.runs() + (o.runs() == 1 ? " run:" : " runs:"));
    byScenario.forEach((s, ms) -> line(medianLine(s, ms)));
    medians.forEach((k, v) -> line(Stats.medianLine(k, v)));
    if (devServerReport != null) besideDevServer();
    line(report.broken() ? "!! an invariant broke (see the !! lines)" : "invariants held in every run; reconcile clean after every scenario");
    write("bench-" + o.stamp() + ".txt", report.text());
    return report.broken() ? 1 : 0;
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
      off = jvm.load("b1", run, sizes, o.profile());
      byScenario.computeIfAbsent("b1", k -> new ArrayList<>()).add(off);
    }
    line("  PostgreSQL " + durability(true));
    Measured on;
    try {
      on = jvm.load("b1", run, sizes, o.profile());
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

  /**
   * The arrival rate of the first minute's open loop and of its warm twin: about half of what the
   * dev server admits on the 2-core machine of evidence/bench/PERFORMANCE.md (fixed, since the
   * first minute comes before any capacity is measured).
   */
  static final double FIRST_MINUTE_RATE = 30;

  /** B1 as an open loop at {@link #FIRST_MINUTE_RATE} for --open-loop-seconds: CREATED p50 / p99 and the 503s. */
  private ScenarioResult halfCapacityLoop(String label, Map<String, List<Double>> medians) throws Exception {
    int n = Math.max(50, (int) Math.round(FIRST_MINUTE_RATE * o.openLoopSeconds()));
    Measured m = jvm.load("b1", 1, List.of("--rate", String.format(java.util.Locale.ROOT, "%.3f", FIRST_MINUTE_RATE),
        "--buyers", String.valueOf(n), "--max-seconds", String.valueOf(2 * o.openLoopSeconds() + 30)), false);
    ScenarioResult r = m.result();
    line(String.format("  %sopen loop at %.0f arrivals/s: created/s %.1f, CREATED p50 / p99 %.0f / %.0f ms, outcomes %s",
        label, FIRST_MINUTE_RATE, r.rate(), r.p50Ms(), r.p99Ms(), r.outcomes()));
    put(medians, label + "open loop created p99 ms", r.p99Ms());
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
    line(String.format("open loop: b1 at %s x the capacity of %.1f created/s, %d s each, each after the orders before it"
        + " ended", OPEN_LOOP_LOAD, capacity, o.openLoopSeconds()));
    for (double f : OPEN_LOOP_LOAD) {
      // each rate on its own: the orders of the rate before expire (the bench's TTL) among its arrivals otherwise
      awaitReservationsEnded();
      double rate = f * capacity;
      int n = Math.max(50, (int) Math.round(rate * o.openLoopSeconds()));
      Measured m = jvm.load("b1", 1, List.of("--rate", String.format(java.util.Locale.ROOT, "%.3f", rate), "--buyers",
          String.valueOf(n), "--max-seconds", String.valueOf(2 * o.openLoopSeconds() + 30)), false);
      ScenarioResult r = m.result();
      String refusals = Double.isNaN(r.metric("overloaded p99 ms")) ? ""
          : String.format(", each 503 (OVERLOADED, ENGINE_UNAVAILABLE) p50 / p99 %.0f / %.0f ms", r.metric("overloaded p50 ms"),
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
    line(String.format("  (waited for the earlier orders to end: %d still CREATED after %.0f s)", held, (System.nanoTime() - t0) / 1e9));
    jvm.settle("the earlier scenarios' expiries");
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
    jvm.load("b1", 0, warmUpSizes("b1"), false);
    jvm.load("b2", 0, warmUpSizes("b2"), false);
    List<SweepPoint> points = new ArrayList<>();
    String n = String.valueOf(o.sweepRequests());
    String secs = String.valueOf(o.sweepSeconds());
    for (int clients : SWEEP_CLIENTS) {
      String c = String.valueOf(clients);
      ScenarioResult jdbc = jvm.load("jdbc", 1, List.of("--concurrency", c, "--buyers", n, "--max-seconds", secs,
          "--skip-reconcile"), false).result();
      for (int stock : SWEEP_STOCK) {
        String s = String.valueOf(stock);
        ScenarioResult b1 = jvm.load("b1", 1, List.of("--concurrency", c, "--buyers", n, "--stock", s, "--max-seconds",
            secs, "--skip-reconcile"), false).result();
        points.add(new SweepPoint(clients, stock, "b1", b1.requests(), b1.rate(), b1.metric("sold_out/s"), b1.p50Ms(),
            b1.p99Ms(), jdbc.rate()));
        int orders = Math.min(stock, o.sweepRequests());
        ScenarioResult b2 = jvm.load("b2", 1, List.of("--concurrency", c, "--orders", String.valueOf(orders), "--stock", s,
            "--max-seconds", secs, "--skip-reconcile"), false).result();
        points.add(new SweepPoint(clients, stock, "b2", b2.requests(), b2.rate(), Double.NaN, b2.p50Ms(), b2.p99Ms(),
            jdbc.rate()));
      }
    }
    Load.Reconciled rec = Load.reconcile(new HttpJson(adminUrl, null, Load.RECONCILE_TIMEOUT), Duration.ofSeconds(120));
    line("reconcile after the sweep: " + rec.verdict());
    if (!rec.clean()) flag("reconcile not clean after the sweep");
    String table = "# flashsale sweep " + o.stamp() + "\n\n" + report.text() + "\n" + SweepTable.markdown(points)
        + "\nb1: throughput = created/s (sold-out/s beside it once the stock is gone); b2: PAID orders/s, p50/p99 of the"
        + " pay call. JDBC ceiling: the same admission transaction over JDBC at the same clients.\n";
    write("sweep-" + o.stamp() + ".md", table);
    out.println(SweepTable.markdown(points));
    Path png = o.outDir().resolve("sweep-" + o.stamp() + ".png");
    Charts.write(png, "flashsale sweep, " + w.engine().configName() + " engine, 2 cores: B1 admission and B2 end to end",
        List.of(panel("throughput vs clients", "per second", false, SweepTable.series(points, false)),
            panel("p99 latency vs clients", "p99 ms (log)", true, SweepTable.series(points, true))),
        1600, 600);
    out.println("written to " + png);
    return report.broken() ? 1 : 0;
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
    String crowd = String.valueOf(Math.min(500, o.stormBuyers()));
    return switch (scenario) {
      case "engine", "jdbc" -> List.of("--buyers", String.valueOf(Math.min(500, o.buyers())));
      case "b1", "b1-sold-out" -> List.of("--buyers", String.valueOf(Math.min(500, o.buyers())), "--storm-buyers", crowd);
      case "pgbench" -> List.of("--pgbench-seconds", String.valueOf(Math.min(2, o.pgbenchSeconds())));
      case "b2" -> List.of("--orders", String.valueOf(Math.min(100, o.orders())), "--storm-buyers", crowd);
      case "b3" -> List.of("--storm-orders", String.valueOf(Math.min(5, o.stormOrders())), "--copies",
          String.valueOf(Math.min(10, o.copies())), "--storm-buyers", crowd);
      case "b4" -> List.of("--crowd", String.valueOf(Math.min(500, o.crowd())), "--crowd-units",
          String.valueOf(Math.min(25, o.crowdUnits())));
      default -> List.of();
    };
  }

  private static Charts.Panel panel(String title, String yLabel, boolean logY, Map<String, List<double[]>> series) {
    List<Charts.Series> lines = new ArrayList<>();
    series.forEach((name, pts) -> lines.add(new Charts.Series(name, pts, name.startsWith("JDBC"))));
    return new Charts.Panel(title, "clients (log)", yLabel, true, logY, lines);
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
    return BenchReport.ratio(a, b);
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
    if (shape != null) line("engine (--cluster): " + shape.describe());
    line("service CPU = " + cpu.describe() + "; client CPU = the load JVM (+ pgbench); shares of " + cores
        + " cores x wall time");
    line("PostgreSQL: " + (w.stack() == null ? "external"
        : w.stack().postgresDurable() ? "fsync and full_page_writes on (durable)"
        : "fsync and full_page_writes off (a scratch stack; --fsync-cost measures b1 with them on too)"));
    line("warm-up before up (warmUp.duration): " + warmUpState());
    line("service log: WARNs of " + BenchCommand.CANCELLED_PROMISES_LOGGER + " (a stack trace per cancelled timer"
        + " promise) are off during the bench");
  }

  /** What the service's warm-up health check says: the first minute's figures come after it. */
  private String warmUpState() {
    try {
      HttpJson.Reply health = new HttpJson(adminUrl, null, java.time.Duration.ofSeconds(10)).get("/healthcheck");
      com.fasterxml.jackson.databind.JsonNode warm = health.body() == null ? null : health.body().get("warm-up");
      return warm == null ? "no warm-up check" : warm.path("message").asText("");
    } catch (RuntimeException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  /**
   * --cluster: this run's medians beside the dev server's (the same command, run first), then the
   * dev server's report whole. Its broken invariant breaks this bench too.
   */
  private void besideDevServer() {
    line("");
    line("the production shape beside the dev server (medians; the dev server's bench ran first, its report below):");
    EngineComparison.table("dev server", EngineComparison.medians(devServerReport), "temporal server on postgresql",
        EngineComparison.medians(report.text())).forEach(this::line);
    line("");
    line("---- the dev server's report ----");
    for (String l : devServerReport.split("\n")) line(l);
    line("---- end of the dev server's report ----");
    if (devServerReport.contains("\n!! ")) flag("the dev server's bench broke an invariant (its report above)");
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
    report.flag(what);
  }

  private void write(String name, String text) throws IOException {
    report.write(o.outDir(), name, text);
  }

  private static boolean onPath(String program) {
    String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) return true;
    }
    return false;
  }

  private static void put(Map<String, List<Double>> m, String k, double v) {
    BenchReport.put(m, k, v);
  }

  private void line(String s) {
    report.line(s);
  }
}
