package io.flashsale.tools;

import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.tools.Bench.Measured;
import io.flashsale.tools.bench.CpuSplit;
import io.flashsale.tools.bench.EngineCeiling;
import io.flashsale.tools.bench.JfrSummary;
import io.flashsale.tools.bench.Load;
import io.flashsale.tools.bench.ScenarioResult;
import io.flashsale.tools.bench.ServiceCpu;
import io.flashsale.tools.bench.TaskLatencies;
import io.flashsale.tools.bench.ThreadCpu;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs each scenario as `./flashsale load` in a child JVM (same java, same classpath) and measures
 * its window: the CPU split, the service's threads and workflow tasks between its MARK lines, and
 * with --profile a JFR recording of both sides; afterwards it waits for the service to settle.
 */
final class LoadJvm {
  private final FlashsaleApplication.Wiring w;
  private final String apiUrl;
  private final String adminUrl;
  /** Reads the service's SDK metrics before and after every scenario. */
  private final HttpJson metricsClient;
  private final Bench.Options o;
  private final BenchReport report;
  private final ServiceCpu cpu;
  private final int cores;
  private final Bench.OrdersWorker ordersWorker;
  /** Set in each load JVM's environment besides this one's (the engine's certificates folder, on a cluster). */
  private final java.util.Map<String, String> environment;

  LoadJvm(FlashsaleApplication.Wiring w, String apiUrl, String adminUrl, Bench.Options o, BenchReport report,
      ServiceCpu cpu, int cores, Bench.OrdersWorker ordersWorker, java.util.Map<String, String> environment) {
    this.environment = environment;
    this.w = w;
    this.apiUrl = apiUrl;
    this.adminUrl = adminUrl;
    this.metricsClient = new HttpJson(adminUrl, null, Duration.ofSeconds(10));
    this.o = o;
    this.report = report;
    this.cpu = cpu;
    this.cores = cores;
    this.ordersWorker = ordersWorker;
  }

  /** Runs one scenario in a child JVM; samples CPU (and records JFR) between its MARK lines. */
  Measured load(String scenario, int run, List<String> overrides, boolean profile) throws Exception {
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
        "--buyers", String.valueOf(o.buyers()), "--storm-buyers", String.valueOf(o.stormBuyers()),
        "--jdbc-pool", String.valueOf(o.jdbcPool()),
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
    pb.environment().putAll(environment);
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
          report.line(l.startsWith("  ") ? l : "  " + l);
        } else {
          report.out().println("  (warm-up) " + l);
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
      report.line("    " + split.line());
      report.line("    " + split.perOperationLine(ScenarioResult.operation(scenario), result.successes()));
      report.line("    " + ThreadCpu.perOperationLine(ScenarioResult.operation(scenario),
          ThreadCpu.between(threadsAtStart, threadsAtEnd), result.successes()));
    }
    boolean scraped = tasksAtStart != null && tasksAtEnd != null;
    Map<String, TaskLatencies.Timer> tasks = scraped ? TaskLatencies.between(tasksAtStart, tasksAtEnd) : Map.of();
    if (split != null && run > 0) {
      report.line("    the service's workflow tasks, mean / p99 ms (count): " + (scraped ? TaskLatencies.describe(tasks)
          : "not known, the SDK's metrics could not be read from " + io.flashsale.launcher.observe.SdkMetrics.PATH));
    }
    if (!result.ok()) report.flag(scenario + (run == 0 ? " warm-up" : " run " + run) + " broke an invariant: " + result.broken());
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
  void settle(String after) throws InterruptedException {
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
        report.out().println(String.format("  (settled after %s in %.0f s: engine + PostgreSQL at %.0f %% of a core)", after,
            (System.nanoTime() - t0) / 1e9, 100 * share));
        return;
      }
    }
    report.line(String.format("  (after %s the engine and PostgreSQL stayed above %.0f %% of a core for %d s: the next"
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
    report.line("    JFR " + f + " (summary: " + summarise(f).getFileName() + ")");
  }

  /** The recording as text beside it (the .jfr itself is never committed). */
  private static Path summarise(Path jfr) throws IOException {
    Path txt = jfr.resolveSibling(jfr.getFileName().toString().replaceAll("\\.jfr$", ".txt"));
    Files.writeString(txt, JfrSummary.summarise(jfr));
    return txt;
  }


  private Path jfrFile(String name) throws IOException {
    Files.createDirectories(o.outDir());
    return o.outDir().resolve("profile-" + name + "-" + o.stamp() + ".jfr");
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
}
