package io.flashsale.tools;

import io.flashsale.devstack.cluster.Cluster;
import io.flashsale.launcher.FlashsaleConfiguration;
import io.flashsale.launcher.TemporalEngine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code ./flashsale bench --cluster}: the service measured on the production shape's engine, the
 * Temporal server on its own PostgreSQL behind mutual TLS ({@link Cluster} without the service, in a
 * folder of the bench's own), after the same scenarios on the dev server in a bench JVM of their own,
 * so one report holds both (tools/README.md, Benchmarks).
 */
final class ProductionShape {
  private final Cluster cluster;

  private ProductionShape(Cluster cluster) {
    this.cluster = cluster;
  }

  /**
   * Starts the engine alone on free ports; it stops, and its folder (certificates, keys, the
   * database password) goes, when this JVM ends, however the start went.
   */
  static ProductionShape start(Path home, Consumer<String> progress) throws IOException {
    Path data = Files.createTempDirectory("flashsale-bench-cluster-");
    Cluster cluster = Cluster.start(new Cluster.Settings(home, data, 0, 0, 0, 0, false), progress,
        () -> StackScriptCommand.deleteTree(data));
    return new ProductionShape(cluster);
  }

  /** Fails now, not after the dev server's bench, when the cluster's binaries are not installed. */
  static void checkInstalled(Path home) {
    Cluster.Binaries.find(home);
  }

  /** The service connects to this engine as a production instance does: external, its certificate. */
  void configure(FlashsaleConfiguration cfg) {
    cfg.temporal.engine = TemporalEngine.EXTERNAL;
    cfg.temporal.target = cluster.temporalAddress();
    cfg.temporal.tls.certificateDir = cluster.tls().dir().toString();
  }

  /** What a load JVM needs to reach the engine itself (the engine scenario): the certificates folder. */
  Map<String, String> loadEnvironment() {
    return Map.of("FLASHSALE_TEMPORAL_TLS_DIR", cluster.tls().dir().toString());
  }

  /** The Temporal server's PostgreSQL (its backends are the postmaster's children). */
  List<ProcessHandle> engineDatabase() {
    return ProcessHandle.of(cluster.temporalPostgresPid()).map(List::of).orElse(List.of());
  }

  String describe() {
    return "Temporal server " + Cluster.SERVER_VERSION + " (pid " + cluster.temporalServerPid()
        + ") on its own PostgreSQL (pid " + cluster.temporalPostgresPid() + "), persistence and SQL visibility,"
        + " mutual TLS, at " + cluster.temporalAddress() + " (./flashsale cluster --without-service)";
  }

  /**
   * The same bench on the dev server, first, in a JVM of its own: this JVM's arguments with the
   * engine set to the dev server, without --cluster, its report written to a folder of its own.
   * Returns that report's text; the child's console is this one's.
   */
  static String devServerTwin(Consumer<String> progress) throws IOException, InterruptedException {
    Path out = Files.createTempDirectory("flashsale-bench-dev-server-");
    try {
      List<String> cmd = twinCommand(out);
      progress.accept("the same bench on the dev server first, in a JVM of its own (its report: " + out + ")");
      ProcessBuilder pb = new ProcessBuilder(cmd).inheritIO();
      // the dev server takes no certificate: a cluster's folder in this environment is not the twin's
      pb.environment().remove("FLASHSALE_TEMPORAL_TLS_DIR");
      Process p = pb.start();
      // this JVM stopped (Ctrl-C, a CI timeout): the twin and what it started go too
      Thread stopTwin = new Thread(() -> {
        p.descendants().forEach(ProcessHandle::destroy);
        p.destroy();
      }, "bench-twin-stop");
      Runtime.getRuntime().addShutdownHook(stopTwin);
      int exit = p.waitFor();
      Runtime.getRuntime().removeShutdownHook(stopTwin);
      try (var reports = Files.list(out)) {
        Path report = reports.filter(f -> f.getFileName().toString().startsWith("bench-")
            && f.getFileName().toString().endsWith(".txt")).findFirst()
            .orElseThrow(() -> new IOException("the dev-server bench wrote no report (exit " + exit + ")"));
        String text = Files.readString(report);
        return exit == 0 ? text : text + "!! the dev-server bench exited " + exit + "\n";
      }
    } finally {
      StackScriptCommand.deleteTree(out);
    }
  }

  /** This JVM's command with the dev server as the engine, no --cluster, and --out the given folder. */
  static List<String> twinCommand(Path out) throws IOException {
    // the kernel's record of this JVM's command line (ProcessHandle.Info may not have it), NUL-separated
    String[] line = new String(Files.readAllBytes(Path.of("/proc/self/cmdline")), java.nio.charset.StandardCharsets.UTF_8)
        .split("\0");
    List<String> args = List.of(line).subList(1, line.length);
    return twinArguments(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()), args, out);
  }

  static List<String> twinArguments(List<String> cmd, List<String> args, Path out) {
    int main = args.indexOf(io.flashsale.launcher.FlashsaleApplication.class.getName());
    if (main < 0 || main + 1 >= args.size() || !args.get(main + 1).equals("bench")) {
      throw new IllegalStateException("not a bench JVM: " + args);
    }
    List<String> result = new ArrayList<>(cmd);
    for (String a : args.subList(0, main)) if (!a.startsWith("-Ddw.temporal.engine=")) result.add(a);
    result.add("-Ddw.temporal.engine=" + TemporalEngine.DEV_SERVER.configName());
    result.add(args.get(main));
    result.add("bench");
    List<String> rest = args.subList(main + 2, args.size());
    for (int i = 0; i < rest.size(); i++) {
      String a = rest.get(i);
      if (names(a, "--cluster")) continue; // the twin must not start its own
      if (names(a, "--out")) { // the twin writes to its own folder
        if (!a.contains("=")) i++;
        continue;
      }
      result.add(a);
    }
    result.add("--out");
    result.add(out.toString());
    return result;
  }

  /** The argument is the option as written or abbreviated (the parser takes a unique prefix), with or without "=value". */
  static boolean names(String arg, String option) {
    String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
    return name.length() > 3 && name.startsWith("--") && option.startsWith(name);
  }
}
