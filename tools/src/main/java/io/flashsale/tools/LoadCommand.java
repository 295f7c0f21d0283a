package io.flashsale.tools;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.tools.bench.ClosedLoop;
import io.flashsale.tools.bench.Load;
import io.flashsale.tools.bench.ScenarioResult;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.sourceforge.argparse4j.impl.Arguments;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/**
 * ./flashsale load: one load scenario against a running service, from this JVM, like a real
 * client. Prints a human line and one {@code RESULT {json}} line; exits 1 when an invariant broke.
 * The database password comes from PGPASSWORD, the callback secret from FLASHSALE_CALLBACK_SECRET,
 * the channel's merchant key from FLASHSALE_CHANNEL_MERCHANT_KEY (environment, so they stay off the
 * command line).
 */
public class LoadCommand extends Command {
  public static final List<String> SCENARIOS = List.of("engine", "b1", "b1-sold-out", "jdbc", "pgbench", "b2", "b3", "b4");

  public LoadCommand() {
    super("load", "run one load scenario (" + String.join(", ", SCENARIOS) + ") against a running service");
  }

  @Override
  public void configure(Subparser p) {
    p.addArgument("--scenario").choices(SCENARIOS.toArray(String[]::new)).setDefault("b1");
    p.addArgument("--api").setDefault("http://127.0.0.1:8080");
    p.addArgument("--admin").setDefault("http://127.0.0.1:8081");
    p.addArgument("--channel").setDefault("http://127.0.0.1:8090");
    p.addArgument("--temporal").setDefault("127.0.0.1:7233").help("engine: the Temporal frontend the service uses");
    p.addArgument("--namespace").setDefault("default").help("engine: its namespace");
    p.addArgument("--database-url").required(true).help("JDBC URL of the service's database (user in it or --database-user)");
    p.addArgument("--database-user").setDefault("postgres");
    p.addArgument("--run").type(Integer.class).setDefault(1).help("run number, for names and the report");
    addScenarioSizes(p);
    p.addArgument("--stock").type(Integer.class).setDefault(0).help("b1/b2 units on sale; 0 = twice the requests (never sells out)");
    p.addArgument("--rate").type(Double.class).setDefault(0.0)
        .help("b1, b1-sold-out: arrivals per second, an open loop (latency counts from each arrival); 0 = closed loop");
    p.addArgument("--max-seconds").type(Integer.class).setDefault(600).help("stop sending new requests after this");
    p.addArgument("--skip-reconcile").action(Arguments.storeTrue()).help("no reconcile task after the scenario");
    p.addArgument("--reconcile-seconds").type(Integer.class).setDefault(60).help("how long pending orders may converge");
  }

  /** The sizes of the scenarios, the same options for one load run and for the bench that starts them. */
  static void addScenarioSizes(Subparser p) {
    p.addArgument("--concurrency").type(Integer.class).setDefault(64).help("clients of every scenario (threads, pgbench clients)");
    p.addArgument("--buyers").type(Integer.class).setDefault(10_000).help("engine, b1, b1-sold-out, jdbc: requests (distinct keys)");
    p.addArgument("--storm-buyers").type(Integer.class).setDefault(3_000)
        .help("b1, b1-sold-out, b2, b3 and the wrk storms: distinct buyers the requests go round, one login each");
    p.addArgument("--jdbc-pool").type(Integer.class).setDefault(4).help("jdbc: the ceiling's connections, shared by the clients");
    p.addArgument("--orders").type(Integer.class).setDefault(2000).help("b2: orders end to end");
    p.addArgument("--storm-orders").type(Integer.class).setDefault(100).help("b3: orders");
    p.addArgument("--copies").type(Integer.class).setDefault(50).help("b3: callbacks per order");
    p.addArgument("--pgbench-seconds").type(Integer.class).setDefault(8);
    p.addArgument("--crowd").type(Integer.class).setDefault(10_000).help("b4: distinct buyers, one login each");
    p.addArgument("--crowd-units").type(Integer.class).setDefault(500).help("b4: units on sale, one per buyer");
    p.addArgument("--arrival-seconds").type(Double.class).setDefault(2.0).help("b4: the crowd arrives within this");
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) throws Exception {
    // a plain command's bootstrap logging filters at its appender and leaves the root at DEBUG, so
    // every library built its debug lines for nothing: the crowd's client spent its time there
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
        .setLevel(ch.qos.logback.classic.Level.WARN);
    PrintStream out = System.out;
    Load.Endpoints at = new Load.Endpoints(ns.getString("api"), ns.getString("admin"), ns.getString("channel"),
        ns.getString("database_url"), ns.getString("database_user"), env("PGPASSWORD"), env("FLASHSALE_CALLBACK_SECRET"),
        env("FLASHSALE_CHANNEL_MERCHANT_KEY"), ns.getString("temporal"), ns.getString("namespace"));
    ScenarioResult r;
    try (Load load = new Load(at, out).openLoop(ns.getDouble("rate")).stormBuyers(ns.getInt("storm_buyers"))) {
      try {
        r = runScenario(load, ns);
      } catch (RuntimeException e) { // e.g. its SKU or login got no answer: a result that says so, not a crash
        r = ScenarioResult.aborted(ns.getString("scenario"), ns.getInt("run"), ns.getInt("concurrency"),
            ClosedLoop.failure(e), e.toString());
      }
      if (!ns.getBoolean("skip_reconcile")) {
        Load.Reconciled rec = load.reconcile(Duration.ofSeconds(ns.getInt("reconcile_seconds")));
        List<String> broken = new ArrayList<>(r.broken());
        if (!rec.clean()) broken.add("reconcile not clean: " + rec.verdict());
        r = new ScenarioResult(r.scenario(), r.run(), r.clients(), r.requests(), r.seconds(), r.rate(), r.rateUnit(),
            r.p50Ms(), r.p99Ms(), r.outcomes(), r.metrics(), broken, rec.verdict(), r.notes());
      }
    }
    out.println(humanLine(r));
    for (String b : r.broken()) out.println("  !! " + r.scenario() + " run " + r.run() + ": " + b);
    out.println(r.toLine());
    out.flush();
    if (!r.ok()) System.exit(1);
  }

  private static ScenarioResult runScenario(Load load, Namespace ns) throws Exception {
    int run = ns.getInt("run");
    int c = ns.getInt("concurrency");
    int buyers = ns.getInt("buyers");
    Duration max = Duration.ofSeconds(ns.getInt("max_seconds"));
    int stock = ns.getInt("stock");
    return switch (ns.getString("scenario")) {
      case "engine" -> load.engine(run, buyers, c, max);
      case "b1" -> load.b1(run, buyers, stock > 0 ? stock : 2 * buyers, c, max);
      case "b1-sold-out" -> load.b1SoldOut(run, buyers, c, max);
      case "jdbc" -> load.jdbc(run, buyers, c, ns.getInt("jdbc_pool"), max);
      case "pgbench" -> load.pgbench(run, c, ns.getInt("pgbench_seconds"));
      case "b2" -> load.b2(run, ns.getInt("orders"), stock > 0 ? stock : 2 * ns.getInt("orders"), c, max);
      case "b3" -> load.b3(run, ns.getInt("storm_orders"), ns.getInt("copies"), c);
      case "b4" -> load.b4(run, ns.getInt("crowd"), ns.getInt("crowd_units"), ns.getDouble("arrival_seconds"), max);
      default -> throw new IllegalArgumentException(ns.getString("scenario"));
    };
  }

  /** One line a person reads: the headline rate, its latencies, every outcome, the reconcile verdict. */
  static String humanLine(ScenarioResult r) {
    StringBuilder sb = new StringBuilder(String.format("%s run %d: %d requests, %d clients, %.2f s: ", r.scenario(),
        r.run(), r.requests(), r.clients(), r.seconds()));
    sb.append(Double.isNaN(r.rate()) ? "no rate" : String.format("%.1f %s", r.rate(), r.rateUnit()));
    // a latency nobody measured (no such answer, or pgbench's mean only) is left out, never printed as NaN
    if (!Double.isNaN(r.p50Ms())) sb.append(String.format(", p50/p99 %.1f/%.1f ms", r.p50Ms(), r.p99Ms()));
    sb.append(", outcomes ").append(r.outcomes());
    r.metrics().forEach((k, v) -> {
      if (!Double.isNaN(v)) sb.append(", ").append(k).append(' ').append(number(v));
    });
    for (String n : r.notes()) sb.append("; ").append(n);
    if (!r.reconcile().isEmpty()) sb.append("; reconcile ").append(r.reconcile());
    return sb.toString();
  }

  /** A count as a count (oversell 0, not 0.0), anything else with one decimal. */
  static String number(double v) {
    return v == Math.rint(v) && Math.abs(v) < 1e15 ? String.valueOf((long) v) : String.format("%.1f", v);
  }

  private static String env(String name) {
    String v = System.getenv(name);
    return v == null ? "" : v;
  }
}
