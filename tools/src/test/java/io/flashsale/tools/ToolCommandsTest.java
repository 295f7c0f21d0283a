package io.flashsale.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;
import java.util.List;
import java.util.Map;
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
    assertTrue(names.containsAll(List.of("demo", "bench")), names.toString());
  }

  @Test
  void benchOptionsReachTheScriptUnderTheNamesItReads() throws ArgumentParserException {
    Namespace ns = parse(new BenchCommand(app), "--runs", "1", "--buyers", "10", "--units", "5", "--concurrency", "2",
        "--orders", "3", "--storm-orders", "4", "--copies", "6", "--out", "target/bench");

    assertEquals(Map.of("runs", 1, "buyers", 10, "units", 5, "concurrency", 2, "orders", 3, "storm_orders", 4,
        "copies", 6), benchNumbers(ns));
    assertEquals("target/bench", ns.getString("out"));
  }

  @Test
  void aBenchWithoutOptionsRunsTheDocumentedDefaults() throws ArgumentParserException {
    Namespace ns = parse(new BenchCommand(app));

    // three runs of each benchmark, at the sizes the recorded results in evidence/bench/ name
    assertEquals(Map.of("runs", 3, "buyers", 2000, "units", 400, "concurrency", 32, "orders", 200, "storm_orders", 20,
        "copies", 50), benchNumbers(ns));
    assertEquals("evidence/bench", ns.getString("out"));
  }

  @Test
  void theDemoKeepsTheStackRunningOnlyWhenAsked() throws ArgumentParserException {
    DemoCommand demo = new DemoCommand(app);

    assertFalse(demo.keepRunning(parse(demo)));
    assertTrue(demo.keepRunning(parse(demo, "--keep")));
  }

  /** The numbers BenchCommand.script reads, under the names it reads them by. */
  private static Map<String, Integer> benchNumbers(Namespace ns) {
    return Map.of("runs", ns.getInt("runs"), "buyers", ns.getInt("buyers"), "units", ns.getInt("units"),
        "concurrency", ns.getInt("concurrency"), "orders", ns.getInt("orders"), "storm_orders",
        ns.getInt("storm_orders"), "copies", ns.getInt("copies"));
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
