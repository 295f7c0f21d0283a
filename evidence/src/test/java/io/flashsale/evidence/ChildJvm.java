package io.flashsale.evidence;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A flashsale command in its own JVM (worker, relay), so an experiment can SIGKILL it for real.
 * Output goes to target/children/&lt;name&gt;.log.
 */
final class ChildJvm implements AutoCloseable {
  private final Process process;
  private final Path log;

  private ChildJvm(Process process, Path log) {
    this.process = process;
    this.log = log;
  }

  static ChildJvm start(String name, Map<String, String> systemProperties, String... args) throws IOException {
    return start(name, List.of(), systemProperties, args);
  }

  /** With environment variables of its own (secrets a command reads from its environment, never its argv). */
  static ChildJvm start(String name, Map<String, String> systemProperties, Map<String, String> environment,
      String... args) throws IOException {
    return startMain(name, "io.flashsale.launcher.FlashsaleApplication", List.of(), systemProperties, environment, args);
  }

  /** With more JVM options, e.g. for a faster start. */
  static ChildJvm start(String name, List<String> jvmOptions, Map<String, String> systemProperties, String... args)
      throws IOException {
    return startMain(name, "io.flashsale.launcher.FlashsaleApplication", jvmOptions, systemProperties, args);
  }

  /** As start, with another entry point on the test classpath (e.g. {@link WorkerWithoutSafeguard}). */
  static ChildJvm startMain(String name, String mainClass, Map<String, String> systemProperties, String... args)
      throws IOException {
    return startMain(name, mainClass, List.of(), systemProperties, args);
  }

  private static ChildJvm startMain(String name, String mainClass, List<String> jvmOptions,
      Map<String, String> systemProperties, String... args)
      throws IOException {
    return startMain(name, mainClass, jvmOptions, systemProperties, Map.of(), args);
  }

  private static ChildJvm startMain(String name, String mainClass, List<String> jvmOptions,
      Map<String, String> systemProperties, Map<String, String> environment, String... args)
      throws IOException {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m"));
    cmd.addAll(jvmOptions);
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path")));
    systemProperties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
    // a test's server is a scratch stack, as the in-process one (Stack): its PostgreSQL runs fsync off
    if (!systemProperties.containsKey("dw.database.embeddedDurable")) cmd.add("-Ddw.database.embeddedDurable=false");
    // no warm-up before "up" unless a test asks for one: the tests measure no speed
    if (!systemProperties.containsKey("dw.warmUp.duration")) cmd.add("-Ddw.warmUp.duration=0s");
    cmd.add(mainClass);
    cmd.addAll(List.of(args));
    Path dir = Path.of("target", "children");
    Files.createDirectories(dir);
    Path log = dir.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().putAll(environment);
    Process p = pb.start();
    return new ChildJvm(p, log);
  }

  long pid() {
    return process.pid();
  }

  boolean logContains(String text) {
    try {
      return Files.exists(log) && Files.readString(log).contains(text);
    } catch (IOException e) {
      return false;
    }
  }

  void awaitLog(String text, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      if (logContains(text)) return;
      if (!process.isAlive()) throw new AssertionError("child exited (" + process.exitValue() + "), see " + log);
      Thread.sleep(100);
    }
    throw new AssertionError("child never printed '" + text + "', see " + log);
  }

  /** Waits for the process to end by itself; its exit status. */
  int awaitExit(long timeoutMs) throws InterruptedException {
    if (!process.waitFor(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("child did not exit within " + timeoutMs + " ms, see " + log);
    }
    return process.exitValue();
  }

  String log() throws IOException {
    return Files.readString(log);
  }

  /** SIGTERM (what an orchestrator sends to stop a process); {@link #awaitExit} then gives its status. */
  void sigterm() {
    process.destroy();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** SIGKILL (kill -9); returns the exit status the shell would show (137). */
  int killHard() throws InterruptedException {
    process.destroyForcibly();
    return process.waitFor();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
    }
  }
}
