package io.flashsale.tools;

import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import net.sourceforge.argparse4j.impl.Arguments;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/**
 * ./flashsale bench: the embedded stack in this JVM (the service), each scenario in a child
 * `./flashsale load` JVM (docs/DESIGN.md §Experiments, benchmarks); results to evidence/bench/.
 * With --sweep: B1 and B2 over clients x stock beside the JDBC ceiling, as a markdown table.
 */
public class BenchCommand extends StackScriptCommand {

  public BenchCommand(FlashsaleApplication app) {
    super(app, "bench", "start the embedded stack, run the benchmarks from a load JVM, write evidence/bench/");
  }

  @Override
  public void configure(Subparser subparser) {
    super.configure(subparser);
    subparser.addArgument("--runs").type(Integer.class).setDefault(3);
    LoadCommand.addScenarioSizes(subparser);
    subparser.addArgument("--units").type(Integer.class).setDefault(0)
        .help("b1 units on sale; 0 = twice the buyers, so it never sells out during the run");
    subparser.addArgument("--load-heap").setDefault("1g").help("-Xmx of the load JVM");
    subparser.addArgument("--profile").action(Arguments.storeTrue()).help("JFR of the service and the load JVM per scenario");
    subparser.addArgument("--fsync-cost").action(Arguments.storeTrue())
        .help("b1 twice per run: with fsync off (the scratch default) and with fsync and full_page_writes on"
            + " (./flashsale server's setting); prints both and the ratio");
    subparser.addArgument("--durable").action(Arguments.storeTrue())
        .help("the service's settings as ./flashsale server runs them (PostgreSQL with fsync on), not a scratch stack");
    subparser.addArgument("--cluster").action(Arguments.storeTrue())
        .help("the production shape's engine: the same bench on the dev server first (a JVM of its own), then on a"
            + " Temporal server over its own PostgreSQL behind mutual TLS that the bench starts (./flashsale cluster"
            + " --without-service, in a folder of its own); one report with both, side by side");
    subparser.addArgument("--open-loop-seconds").type(Integer.class).setDefault(10)
        .help("b1 as an open loop at 0.5, 0.8, 1.0, 1.5 x the measured capacity, this long each; 0 = none");
    subparser.addArgument("--sweep").action(Arguments.storeTrue()).help("b1/b2 over clients x stock instead");
    subparser.addArgument("--sweep-requests").type(Integer.class).setDefault(2000).help("sweep: requests per point at most");
    subparser.addArgument("--sweep-seconds").type(Integer.class).setDefault(4).help("sweep: seconds per point at most");
    subparser.addArgument("--out").setDefault("evidence/bench");
    subparser.addArgument("--scenarios").setDefault("all")
        .help("comma-separated, of " + String.join(",", LoadCommand.SCENARIOS) + " (default all), e.g. b1-sold-out");
  }

  @Override
  protected void run(io.dropwizard.core.setup.Bootstrap<FlashsaleConfiguration> bootstrap, Namespace ns,
      FlashsaleConfiguration cfg) throws Exception {
    scenarios(ns.getString("scenarios")); // an unknown one is refused before the stack starts
    // spans are still made and carried (as in production without a collector), not logged: a line
    // per span would be most of the console and of the service's CPU the bench measures
    cfg.tracing.exporter = FlashsaleConfiguration.TracingSettings.Exporter.NONE;
    // the load's buyers each send far more than a person does: the bench measures the service's
    // throughput, not the per-principal rates that would cut each buyer down to a few requests a second
    cfg.rateLimits.enabled = false;
    quietCancelledPromises();
    if (ns.getBoolean("cluster")) {
      if (ns.getBoolean("sweep") || ns.getBoolean("profile")) {
        throw new IllegalArgumentException("--cluster compares two benches' reports: not with --sweep or --profile");
      }
      Path home = Path.of(System.getProperty("flashsale.home", ".")).toAbsolutePath().normalize();
      ProductionShape.checkInstalled(home);
      // the twin first, so nothing of this JVM's stack competes with it for the machine
      devServerReport = ProductionShape.devServerTwin(System.out::println);
      shape = ProductionShape.start(home, System.out::println);
      shape.configure(cfg);
    }
    ordersWorker = new Bench.OrdersWorker(
        io.flashsale.launcher.TemporalRuntime.cacheOptions(cfg.temporal.workflowCacheSize).build(),
        io.flashsale.launcher.TemporalRuntime.workerOptions(cfg.database.maxPoolSize, cfg.temporal));
    super.run(bootstrap, ns, cfg);
  }

  private Bench.OrdersWorker ordersWorker;
  /** --cluster: the engine this bench's service runs on, and the dev server's report of the same bench. */
  private ProductionShape shape;
  private String devServerReport;

  /** The logger whose WARN (with stack trace) for every cancelled timer promise the bench silences. */
  static final String CANCELLED_PROMISES_LOGGER = "io.temporal.internal.sync.DeterministicRunnerImpl";

  /**
   * Under load the SDK warns, with a stack trace, about every cancelled timer promise nobody read:
   * thousands of console lines that bury the report and cost the service CPU the run would charge
   * to it. The bench header says they are off.
   */
  private static void quietCancelledPromises() {
    // the logging is configured by now (ConfiguredCommand does it before run): set the level itself
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(CANCELLED_PROMISES_LOGGER))
        .setLevel(ch.qos.logback.classic.Level.ERROR);
  }

  @Override
  protected boolean scratch(Namespace ns) {
    return !ns.getBoolean("durable");
  }

  static Bench.Options options(Namespace ns) {
    if (ns.getBoolean("durable") && ns.getBoolean("fsync_cost")) {
      throw new IllegalArgumentException("--fsync-cost compares scratch with durable: not with --durable");
    }
    return new Bench.Options(ns.getInt("runs"), ns.getInt("buyers"), ns.getInt("units"), ns.getInt("concurrency"), ns.getInt("jdbc_pool"),
        ns.getInt("orders"), ns.getInt("storm_orders"), ns.getInt("copies"), ns.getInt("pgbench_seconds"),
        ns.getString("load_heap"), ns.getBoolean("profile"), Path.of(ns.getString("out")),
        LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")), ns.getInt("sweep_requests"),
        ns.getInt("sweep_seconds"), scenarios(ns.getString("scenarios")), ns.getBoolean("fsync_cost"),
        ns.getInt("open_loop_seconds"), ns.getInt("crowd"), ns.getInt("crowd_units"), ns.getDouble("arrival_seconds"),
        ns.getInt("storm_buyers"));
  }

  /** The scenarios of --scenarios: empty for all; an unknown name is refused. */
  static List<String> scenarios(String arg) {
    if (arg == null || arg.isBlank() || arg.trim().equals("all")) return List.of();
    List<String> out = new ArrayList<>();
    for (String s : arg.split(",")) {
      String x = s.trim();
      if (x.isEmpty()) continue;
      if (!LoadCommand.SCENARIOS.contains(x)) {
        throw new IllegalArgumentException("unknown scenario " + x + " (known: " + String.join(",", LoadCommand.SCENARIOS) + ")");
      }
      if (!out.contains(x)) out.add(x);
    }
    return out;
  }

  @Override
  protected int script(FlashsaleApplication.Wiring w, Namespace ns) throws Exception {
    Bench bench = new Bench(w, "http://127.0.0.1:" + w.apiPort(), "http://127.0.0.1:" + w.adminPort(), options(ns),
        System.out, ordersWorker, shape, devServerReport);
    return ns.getBoolean("sweep") ? bench.sweep() : bench.run();
  }
}
