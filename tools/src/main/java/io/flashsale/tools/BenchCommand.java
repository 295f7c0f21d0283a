package io.flashsale.tools;

import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/**
 * ./flashsale bench: the embedded stack, benchmarks B1–B3 (docs/DESIGN.md §Experiments, benchmarks),
 * results to evidence/bench/.
 */
public class BenchCommand extends StackScriptCommand {

  public BenchCommand(FlashsaleApplication app) {
    super(app, "bench", "start the embedded stack, run benchmarks B1-B3, write evidence/bench/");
  }

  @Override
  public void configure(Subparser subparser) {
    super.configure(subparser);
    subparser.addArgument("--runs").type(Integer.class).setDefault(3);
    subparser.addArgument("--buyers").type(Integer.class).setDefault(2000).help("B1 buyers (distinct keys)");
    subparser.addArgument("--units").type(Integer.class).setDefault(400).help("B1 units on sale");
    subparser.addArgument("--concurrency").type(Integer.class).setDefault(32);
    subparser.addArgument("--orders").type(Integer.class).setDefault(200).help("B2 orders end to end");
    subparser.addArgument("--storm-orders").type(Integer.class).setDefault(20).help("B3 orders");
    subparser.addArgument("--copies").type(Integer.class).setDefault(50).help("B3 callbacks per order");
    subparser.addArgument("--out").setDefault("evidence/bench");
  }

  @Override
  protected void run(io.dropwizard.core.setup.Bootstrap<FlashsaleConfiguration> bootstrap, Namespace ns,
      FlashsaleConfiguration cfg) throws Exception {
    // before the application runs: B3's orders stay UNKNOWN until the storm's notices converge them
    cfg.orders.unknownFirstQueryMs = 600_000;
    super.run(bootstrap, ns, cfg);
  }

  @Override
  protected int script(FlashsaleApplication.Wiring w, Namespace ns) throws Exception {
    Bench bench = new Bench(w, "http://127.0.0.1:" + w.apiPort(), "http://127.0.0.1:" + w.adminPort(), System.out);
    String report = bench.run(ns.getInt("runs"), ns.getInt("buyers"), ns.getInt("units"), ns.getInt("concurrency"),
        ns.getInt("orders"), ns.getInt("storm_orders"), ns.getInt("copies"));
    Path dir = Path.of(ns.getString("out"));
    Files.createDirectories(dir);
    Path file = dir.resolve("bench-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")) + ".txt");
    Files.writeString(file, report);
    System.out.println("\nwritten to " + file);
    return 0;
  }
}
