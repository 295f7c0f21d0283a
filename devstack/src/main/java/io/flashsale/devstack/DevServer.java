package io.flashsale.devstack;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Temporal CLI's dev server (a real Temporal server with SQLite persistence and the Web UI) as
 * a supervised child process: bound to 127.0.0.1, in its own session and process group (so a
 * Ctrl-C reaches the service, which drains, and not the engine under it), restarted if it dies
 * while the service runs, stopped last. Its pid is kept in the data folder, so the leftover of a
 * JVM that was killed is found and stopped at the next start.
 */
public final class DevServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DevServer.class);
  private static final Duration STARTUP = Duration.ofSeconds(90);
  private static final int MAX_RESTARTS = 3;

  /**
   * How to run it. dbFile null = state in memory only (tests). uiCodecEndpoint: the codec endpoint
   * the Web UI decodes payloads through (docs/DESIGN.md §Payload encryption); null = none.
   */
  public record Options(Path cli, String namespace, int port, int uiPort, Path dbFile, Path stateDir,
      List<String> searchAttributes, String uiCodecEndpoint) {
    public Options(Path cli, String namespace, int port, int uiPort, Path dbFile, Path stateDir,
        List<String> searchAttributes) {
      this(cli, namespace, port, uiPort, dbFile, stateDir, searchAttributes, null);
    }
  }

  private final Options options;
  private final Path pidFile;
  private final Path logFile;
  private volatile Process process;
  private volatile boolean stopping;
  private int restarts;

  private DevServer(Options options) {
    this.options = options;
    this.pidFile = options.stateDir().resolve("temporal-dev-server.pid");
    this.logFile = options.stateDir().resolve("temporal-dev-server.log");
  }

  public static DevServer start(Options options) throws IOException {
    Files.createDirectories(options.stateDir());
    DevServer server = new DevServer(options);
    server.stopLeftover();
    requireFree(options.port(), "temporal.embeddedPort");
    if (options.uiPort() > 0) requireFree(options.uiPort(), "temporal.uiPort");
    server.launch();
    return server;
  }

  public String target() {
    return "127.0.0.1:" + options.port();
  }

  public Optional<String> uiUrl() {
    return options.uiPort() > 0 ? Optional.of("http://127.0.0.1:" + options.uiPort()) : Optional.empty();
  }

  public Path dbFile() {
    return options.dbFile();
  }

  public long pid() {
    return process.pid();
  }

  private void launch() throws IOException {
    List<String> cmd = new ArrayList<>();
    if (Files.isExecutable(Path.of("/usr/bin/setsid"))) cmd.add("/usr/bin/setsid"); // own session and group
    cmd.addAll(List.of(options.cli().toString(), "server", "start-dev",
        "--ip", "127.0.0.1", "--port", String.valueOf(options.port()),
        "--namespace", options.namespace(), "--log-level", "warn"));
    if (options.uiPort() > 0) {
      cmd.addAll(List.of("--ui-ip", "127.0.0.1", "--ui-port", String.valueOf(options.uiPort())));
      if (options.uiCodecEndpoint() != null) cmd.addAll(List.of("--ui-codec-endpoint", options.uiCodecEndpoint()));
    } else {
      cmd.add("--headless");
    }
    if (options.dbFile() != null) {
      Files.createDirectories(options.dbFile().toAbsolutePath().getParent());
      cmd.addAll(List.of("--db-filename", options.dbFile().toAbsolutePath().toString()));
      // SQLite's defaults (rollback journal, a full sync per commit) make each history write wait
      // for the disk; WAL with normal sync survives a crash of the server process and does not
      // (on a fast disk the server's CPU is the bound either way: docs/DESIGN.md §Performance)
      cmd.addAll(List.of("--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal"));
    }
    for (String sa : options.searchAttributes()) cmd.addAll(List.of("--search-attribute", sa + "=Keyword"));
    Process p = new ProcessBuilder(cmd)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
        .start();
    process = p;
    // the start instant makes the pid file name this process only, never a later one with the same pid
    Files.writeString(pidFile, p.pid() + " " + p.toHandle().info().startInstant().map(i -> i.toEpochMilli()).orElse(0L));
    try {
      awaitReady(p);
    } catch (IOException e) {
      p.destroyForcibly();
      throw e;
    }
    log.info("Temporal dev server pid {} on {} (UI {}, state {})", p.pid(), target(), uiUrl().orElse("off"),
        options.dbFile() == null ? "in memory" : options.dbFile());
    p.onExit().thenRun(() -> onExit(p));
  }

  private void awaitReady(Process p) throws IOException {
    long deadline = System.nanoTime() + STARTUP.toNanos();
    while (System.nanoTime() < deadline) {
      if (stopping) throw new IOException("the service is stopping");
      if (!p.isAlive()) {
        throw new IOException("the Temporal dev server exited with " + p.exitValue() + " at start; its log:\n"
            + tail(logFile, 30));
      }
      if (accepts(options.port()) && (options.uiPort() <= 0 || accepts(options.uiPort()))) return;
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while the dev server started", e);
      }
    }
    throw new IOException("the Temporal dev server did not listen on " + target() + " within " + STARTUP
        + "; its log:\n" + tail(logFile, 30));
  }

  /**
   * Supervision: an engine that dies under a running service is started again (same state file;
   * with state in memory the engine comes back empty and the orphan repair of the next
   * reconcile or start gives the orders their workflows back).
   */
  private synchronized void onExit(Process p) {
    if (stopping || p != process) return;
    log.error("Temporal dev server pid {} exited with {} while the service runs", p.pid(), p.exitValue());
    if (restarts >= MAX_RESTARTS) {
      log.error("Temporal dev server restarted {} times already; not again. See {}", restarts, logFile);
      return;
    }
    restarts++;
    try {
      requireFree(options.port(), "temporal.embeddedPort");
      launch();
      log.warn("Temporal dev server restarted (restart {} of {})", restarts, MAX_RESTARTS);
    } catch (IOException e) {
      log.error("Temporal dev server could not be restarted", e);
    }
  }

  /** A dev server left running by a JVM that was killed: stop it, it holds our port and our file. */
  private void stopLeftover() throws IOException {
    if (!Files.exists(pidFile)) return;
    String[] text = Files.readString(pidFile).trim().split(" ");
    Files.deleteIfExists(pidFile);
    long pid;
    long started;
    try {
      pid = Long.parseLong(text[0]);
      started = text.length > 1 ? Long.parseLong(text[1]) : -1;
    } catch (NumberFormatException e) {
      return;
    }
    Optional<ProcessHandle> h = ProcessHandle.of(pid);
    if (h.isEmpty() || !h.get().isAlive()) return;
    long actual = h.get().info().startInstant().map(i -> i.toEpochMilli()).orElse(0L);
    String command = h.get().info().commandLine().orElse(h.get().info().command().orElse(""));
    if (actual != started || !command.contains("start-dev")) return; // the pid now belongs to another process
    log.warn("stopping the Temporal dev server left running by an earlier start (pid {})", pid);
    h.get().destroy();
    try {
      h.get().onExit().get(15, TimeUnit.SECONDS);
    } catch (Exception e) {
      h.get().destroyForcibly();
    }
  }

  private static void requireFree(int port, String setting) throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", port));
    } catch (IOException busy) {
      throw new IOException("port " + port + " on 127.0.0.1 is held by another process; stop it or choose another"
          + " port (" + setting + ")");
    }
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static String tail(Path file, int lines) {
    try {
      List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** SIGTERM, then SIGKILL after a grace period. */
  @Override
  public void close() {
    stopping = true; // before the lock: a restart in progress gives up at once
    synchronized (this) {
      stopNow();
    }
  }

  private void stopNow() {
    Process p = process;
    if (p == null) return;
    p.destroy();
    try {
      if (!p.waitFor(15, TimeUnit.SECONDS)) {
        p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    try {
      Files.deleteIfExists(pidFile);
    } catch (IOException ignored) {
      // the next start checks the pid before using it
    }
    log.info("Temporal dev server stopped");
  }
}
