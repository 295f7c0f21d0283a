package io.flashsale.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;
import java.util.List;
import net.sourceforge.argparse4j.ArgumentParsers;
import net.sourceforge.argparse4j.inf.ArgumentParser;
import net.sourceforge.argparse4j.inf.ArgumentParserException;
import net.sourceforge.argparse4j.inf.Namespace;
import org.junit.jupiter.api.Test;

/** How the demo and the bench reach the launcher's command line, and what their options hand to the scripts. */
class ToolCommandsTest {
  private final FlashsaleApplication app = new FlashsaleApplication();

  @Test
  void theLauncherFindsTheDemoAndTheBenchThroughItsPlugins() {
    Bootstrap<FlashsaleConfiguration> bootstrap = new Bootstrap<>(app);

    app.initialize(bootstrap); // the launcher does not depend on tools: only the ServiceLoader entry brings them

    List<String> names = bootstrap.getCommands().stream().map(Command::getName).toList();
    assertTrue(names.containsAll(List.of("demo", "bench", "load")), names.toString());
  }

  @Test
  void benchOptionsReachTheBenchUnderTheNamesItReads() throws ArgumentParserException {
    Namespace ns = parse(new BenchCommand(app), "--runs", "1", "--buyers", "10", "--units", "5", "--concurrency", "2", "--jdbc-pool", "3",
        "--orders", "3", "--storm-orders", "4", "--copies", "6", "--pgbench-seconds", "2", "--load-heap", "512m",
        "--profile", "--sweep-requests", "50", "--sweep-seconds", "1", "--out", "target/bench", "--fsync-cost");

    Bench.Options o = BenchCommand.options(ns);
    assertEquals(List.of(1, 10, 2, 3, 3, 4, 6, 2, 50, 1), List.of(o.runs(), o.buyers(), o.concurrency(), o.jdbcPool(),
        o.orders(), o.stormOrders(), o.copies(), o.pgbenchSeconds(), o.sweepRequests(), o.sweepSeconds()));
    assertEquals("512m", o.loadHeap());
    assertEquals(5, o.units());
    assertTrue(o.profile());
    assertTrue(o.fsyncCost());
    assertEquals(java.nio.file.Path.of("target/bench"), o.outDir());
  }

  @Test
  void aBenchWithoutOptionsRunsTheDocumentedDefaults() throws ArgumentParserException {
    Namespace ns = parse(new BenchCommand(app));

    // three runs; 10 000 buyers and 2 000 end-to-end orders from 64 clients; the JDBC ceiling on 4 connections
    Bench.Options o = BenchCommand.options(ns);
    assertEquals(List.of(3, 10_000, 64, 4, 2000, 100, 50, 8), List.of(o.runs(), o.buyers(), o.concurrency(), o.jdbcPool(),
        o.orders(), o.stormOrders(), o.copies(), o.pgbenchSeconds()));
    assertFalse(o.profile());
    assertFalse(o.fsyncCost(), "b1 with fsync on only when asked for");
    assertEquals(0, o.units(), "b1's stock: twice the buyers");
    assertFalse(ns.getBoolean("sweep"));
    assertEquals(java.nio.file.Path.of("evidence/bench"), o.outDir());
  }

  @Test
  void benchRunsEveryScenarioUnlessTold() throws ArgumentParserException {
    assertEquals(List.of(), BenchCommand.options(parse(new BenchCommand(app))).scenarios(), "empty = all");
    Bench.Options o = BenchCommand.options(parse(new BenchCommand(app), "--scenarios", "b1-sold-out, b2,b2"));
    assertEquals(List.of("b1-sold-out", "b2"), o.scenarios());
    assertEquals(List.of(), BenchCommand.scenarios("all"));
    assertThrows(IllegalArgumentException.class, () -> BenchCommand.scenarios("b1,b9"));
  }

  @Test
  void theMedianLineOfAScenarioHasRateLatenciesAndCpuPerOperationOnlyWhereMeasured() {
    java.util.function.BiFunction<Double, Double, io.flashsale.tools.bench.ScenarioResult> r = (rate, p50) ->
        new io.flashsale.tools.bench.ScenarioResult("b1", 1, 4, 100, 1, rate, "created/s", p50, 2 * p50,
            java.util.Map.of("CREATED", 100L), java.util.Map.of(), List.of(), "", List.of());
    io.flashsale.tools.bench.CpuSplit cpu1 = new io.flashsale.tools.bench.CpuSplit(1, 0.1,
        java.util.Map.of("jvm", 3.0, "postgres", 0.7), 2); // 30 ms and 7 ms per order, client 1 ms
    io.flashsale.tools.bench.CpuSplit cpu2 = new io.flashsale.tools.bench.CpuSplit(1, 0.3,
        java.util.Map.of("jvm", 5.0, "postgres", 0.9), 2);

    String line = Bench.medianLine("b1", List.of(new Bench.Measured(r.apply(100.0, 10.0), cpu1),
        new Bench.Measured(r.apply(300.0, 20.0), cpu2), new Bench.Measured(r.apply(200.0, 30.0), null)));

    assertEquals("  b1          200.0 created/s, p50 20.0 ms, p99 40.0 ms; cpu per created order: jvm 40 ms, postgres 8.0 ms,"
        + " client 2.0 ms", line);
    String none = Bench.medianLine("pgbench", List.of(new Bench.Measured(
        new io.flashsale.tools.bench.ScenarioResult("pgbench", 1, 4, 0, 1, Double.NaN, "tx/s", Double.NaN, Double.NaN,
            java.util.Map.of(), java.util.Map.of(), List.of(), "", List.of()), null)));
    assertFalse(none.contains("NaN"), none);
  }

  @Test
  void theLoadsHumanLinePrintsOnlyWhatWasMeasured() {
    String line = LoadCommand.humanLine(new io.flashsale.tools.bench.ScenarioResult("pgbench", 1, 4, 10, 2, 5.0, "tx/s",
        Double.NaN, Double.NaN, java.util.Map.of("COMMITTED", 10L), new java.util.LinkedHashMap<>(java.util.Map.of(
            "oversell", 0.0)), List.of(), "", List.of()));
    assertFalse(line.contains("NaN"), line);
    assertTrue(line.contains("oversell 0") && !line.contains("oversell 0.0"), line);
  }

  @Test
  void theLoadCommandNeedsTheDatabaseAndDefaultsToTheLocalService() throws ArgumentParserException {
    Namespace ns = parse(new LoadCommand(), "--scenario", "b2", "--database-url", "jdbc:postgresql://localhost:5432/postgres");

    assertEquals("b2", ns.getString("scenario"));
    assertEquals("http://127.0.0.1:8080", ns.getString("api"));
    assertEquals(64, ns.getInt("concurrency"));
    assertEquals(10_000, ns.getInt("buyers"));
    assertEquals(4, ns.getInt("jdbc_pool"));
    assertFalse(ns.getBoolean("skip_reconcile"));
    assertThrows(ArgumentParserException.class, () -> parse(new LoadCommand(), "--scenario", "b1"));
    assertThrows(ArgumentParserException.class, () -> parse(new LoadCommand(), "--scenario", "b9", "--database-url", "x"));
  }

  @Test
  void theDemoKeepsTheStackRunningOnlyWhenAsked() throws ArgumentParserException {
    DemoCommand demo = new DemoCommand(app);

    assertFalse(demo.keepRunning(parse(demo)));
    assertTrue(demo.keepRunning(parse(demo, "--keep")));
  }

  /** The command's arguments as the launcher's command line parses them (no configuration file). */
  private static Namespace parse(Command command, String... options) throws ArgumentParserException {
    ArgumentParser parser = ArgumentParsers.newFor("flashsale").build();
    command.configure(parser.addSubparsers().addParser(command.getName()));
    String[] args = new String[options.length + 1];
    args[0] = command.getName();
    System.arraycopy(options, 0, args, 1, options.length);
    return parser.parseArgs(args);
  }
}
