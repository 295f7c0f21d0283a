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
        "--profile", "--sweep-requests", "50", "--sweep-seconds", "1", "--out", "target/bench");

    Bench.Options o = BenchCommand.options(ns);
    assertEquals(List.of(1, 10, 2, 3, 3, 4, 6, 2, 50, 1), List.of(o.runs(), o.buyers(), o.concurrency(), o.jdbcPool(),
        o.orders(), o.stormOrders(), o.copies(), o.pgbenchSeconds(), o.sweepRequests(), o.sweepSeconds()));
    assertEquals("512m", o.loadHeap());
    assertEquals(5, o.units());
    assertTrue(o.profile());
    assertEquals(java.nio.file.Path.of("target/bench"), o.outDir());
  }

  @Test
  void aBenchWithoutOptionsRunsTheDocumentedDefaults() throws ArgumentParserException {
    Namespace ns = parse(new BenchCommand(app));

    // three runs; 10 000 buyers and 2 000 end-to-end orders from 64 clients; the JDBC ceiling on 4 connections
    Bench.Options o = BenchCommand.options(ns);
    assertEquals(List.of(3, 10_000, 64, 4, 2000, 20, 50, 8), List.of(o.runs(), o.buyers(), o.concurrency(), o.jdbcPool(),
        o.orders(), o.stormOrders(), o.copies(), o.pgbenchSeconds()));
    assertFalse(o.profile());
    assertEquals(0, o.units(), "b1's stock: twice the buyers");
    assertFalse(ns.getBoolean("sweep"));
    assertEquals(java.nio.file.Path.of("evidence/bench"), o.outDir());
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
