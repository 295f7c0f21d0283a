package io.flashsale.devstack;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local PostgreSQL, supervised like the dev server (docs/DESIGN.md §Engines and
 * configuration). zonky's binaries run initdb and the first start; then a watcher polls the
 * postmaster, and one that dies while the service runs (an OOM kill) is started again with
 * {@code pg_ctl} on the same data directory, port and options: PostgreSQL finds its stale pid
 * file, waits until no process of the dead one holds the shared memory (the start is retried
 * until then), and replays the WAL before it accepts connections. At the service's stop the
 * watcher ends first, then zonky's {@code pg_ctl stop} stops whichever postmaster runs in the
 * directory.
 */
public final class SupervisedPostgres implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SupervisedPostgres.class);
  private static final Duration POLL = Duration.ofMillis(250);
  /** How long one restart may retry its start (old backends exiting, then crash recovery). */
  private static final Duration START_DEADLINE = Duration.ofSeconds(90);
  /** More restarts than this within {@link #RESTART_WINDOW} is a crash loop: give up, the health check says so. */
  private static final int MAX_RESTARTS = 5;
  /** How long one {@code pg_ctl start} waits for the server to accept connections (its -t). */
  private static final int START_WAIT_SECONDS = 60;
  private static final Duration RESTART_WINDOW = Duration.ofMinutes(10);

  /** The line a scratch stack prints: what it gives up for speed. */
  public static final String SCRATCH_NOTICE = "embedded PostgreSQL runs with fsync and full_page_writes OFF (a scratch"
      + " stack: a host crash may lose or corrupt its data; a crash of PostgreSQL alone loses no acknowledged commit)";

  /** How the local PostgreSQL runs: port 0 = any free one (kept across restarts). */
  public record Settings(Path dataDir, int port, boolean durable, boolean supervised) {}

  /** What the health check shows: up, or down since when, and whether the supervisor gave up. */
  public record State(boolean up, long pid, int port, Instant downSince, int restarts, boolean gaveUp,
      boolean supervised) {}

  /** A running postmaster: its pid and start (so a reused pid is not taken for it), binaries and options. */
  private record Postmaster(long pid, long startMillis, Path bin, List<String> options) {
    /** The one postmaster.pid names, read from /proc: the postgres binary, -D &lt;dir&gt;, then its options. */
    static Postmaster read(Path dataDir) throws IOException {
      long pid = pidInFile(dataDir).orElseThrow(() -> new IOException("no postmaster.pid in " + dataDir));
      ProcessHandle h = ProcessHandle.of(pid).orElseThrow(() -> new IOException("postmaster " + pid + " is not running"));
      byte[] raw = Files.readAllBytes(Path.of("/proc", String.valueOf(pid), "cmdline"));
      List<String> argv = Arrays.asList(new String(raw, StandardCharsets.UTF_8).split("\0"));
      int d = argv.indexOf("-D");
      // a stale pid file may name a pid reused by another process: only a postmaster of this directory counts
      if (d < 0 || d + 1 >= argv.size() || !Files.isSameFile(Path.of(argv.get(d + 1)), dataDir)) {
        throw new IOException("pid " + pid + " is not a postmaster of " + dataDir);
      }
      List<String> options = d >= 0 ? argv.subList(Math.min(d + 2, argv.size()), argv.size()) : argv.subList(1, argv.size());
      return new Postmaster(pid, startedAt(h), Path.of(argv.get(0)).getParent(), List.copyOf(options));
    }

    /**
     * Still this process: same pid and start instant (a reused pid is another process), and not a
     * zombie (a killed process its parent did not reap yet keeps its pid, in state Z).
     */
    boolean alive() {
      Optional<ProcessHandle> h = ProcessHandle.of(pid);
      return h.isPresent() && startedAt(h.get()) == startMillis && running(pid);
    }
  }

  /**
   * The process runs: a killed one whose parent has not reaped it yet (the postmaster's parent is
   * whatever adopted it after pg_ctl exited) keeps its pid in state Z, and ProcessHandle calls it alive.
   */
  static boolean running(long pid) {
    if (!ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) return false;
    try {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      int close = stat.lastIndexOf(')');
      char state = close > 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
      return state != 'Z' && state != 'X';
    } catch (IOException gone) {
      return false;
    }
  }

  private static long startedAt(ProcessHandle h) {
    return h.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
  }

  private final EmbeddedPostgres postgres;
  private final Path dataDir;
  private final Path restartLog;
  private final boolean supervised;
  private final Deque<Instant> recentRestarts = new ArrayDeque<>();
  private final ScheduledExecutorService watcher;
  private volatile Postmaster running;
  private volatile boolean durable;
  private volatile boolean stopping;
  private volatile Instant downSince;
  private volatile boolean gaveUp;
  private volatile int restarts;
  private final int startWaitSeconds;

  private SupervisedPostgres(EmbeddedPostgres postgres, Settings settings, Postmaster running, int startWaitSeconds) {
    this.startWaitSeconds = startWaitSeconds;
    this.postgres = postgres;
    this.dataDir = settings.dataDir();
    this.restartLog = dataDir.resolveSibling(dataDir.getFileName() + "-restarted.log");
    this.supervised = settings.supervised();
    this.durable = settings.durable();
    this.running = running;
    this.watcher = supervised ? Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "postgres-supervisor");
      t.setDaemon(true);
      return t;
    }) : null;
  }

  /**
   * The server settings zonky is given. Its own default synchronous_commit=off acknowledges a
   * commit before its WAL leaves PostgreSQL's memory, so a crashed server loses the last
   * acknowledged transactions (X-01 lost 38 of them) while a workflow already recorded their step
   * as done: on in every stack. fsync and full_page_writes decide whether a host crash (power,
   * kernel) keeps them too: on when durable. zonky always passes -F (fsync off); a later
   * {@code -c fsync=on} wins over it.
   */
  static Map<String, String> serverConfig(boolean durable) {
    Map<String, String> config = new LinkedHashMap<>();
    config.put("synchronous_commit", "on");
    config.put("fsync", durable ? "on" : "off");
    config.put("full_page_writes", durable ? "on" : "off");
    // one address, the one the JDBC URL names: with "localhost" on a host that also resolves ::1, a
    // port taken on one address would only be warned about, and the service would connect to the
    // PostgreSQL that holds 127.0.0.1 (another process's); with one address that start fails
    config.put("listen_addresses", LOOPBACK);
    return config;
  }

  /** The one address the postmaster listens on and the service connects to. */
  static final String LOOPBACK = "127.0.0.1";

  public static SupervisedPostgres start(Settings settings) throws IOException {
    return start(settings, START_WAIT_SECONDS);
  }

  /** With the wait of each restart's {@code pg_ctl start}: a test gives 0 to have pg_ctl give up on a server that comes up. */
  static SupervisedPostgres start(Settings settings, int startWaitSeconds) throws IOException {
    Files.createDirectories(settings.dataDir());
    // no shutdown hook of its own: it must stop after the service drained, not beside it; a start on a
    // loaded machine (the test suite on two cores) can take longer than the library's 10 s
    EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60))
        .setDataDirectory(settings.dataDir().toFile()).setCleanDataDirectory(false).setRegisterShutdownHook(false);
    serverConfig(settings.durable()).forEach(builder::setServerConfig);
    if (settings.port() > 0) builder.setPort(settings.port());
    EmbeddedPostgres postgres = builder.start();
    try {
      requireOwnServer(postgres.getPort(), settings.dataDir());
      SupervisedPostgres pg = new SupervisedPostgres(postgres, settings, Postmaster.read(settings.dataDir()),
          startWaitSeconds);
      log.info("embedded PostgreSQL pid {} on port {} (data dir {}, {}, {})", pg.running.pid(), postgres.getPort(),
          settings.dataDir(), settings.durable() ? "durable: fsync on" : "scratch: fsync off",
          settings.supervised() ? "restarted if it dies" : "not supervised");
      if (!settings.durable()) log.warn(SCRATCH_NOTICE);
      if (pg.watcher != null) {
        pg.watcher.scheduleWithFixedDelay(pg::check, POLL.toMillis(), POLL.toMillis(), TimeUnit.MILLISECONDS);
      }
      return pg;
    } catch (IOException | RuntimeException e) {
      postgres.close();
      throw e;
    }
  }

  /**
   * The server on the port serves this data directory. A port taken meanwhile by another process
   * fails the postmaster's bind, while the library's readiness check, which only connects, reaches
   * whoever holds the port: without this the service would run on another PostgreSQL's data.
   */
  static void requireOwnServer(int port, Path dataDir) throws IOException {
    String served;
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(jdbcUrl(port));
        java.sql.Statement s = c.createStatement(); java.sql.ResultSet rs = s.executeQuery("SHOW data_directory")) {
      rs.next();
      served = rs.getString(1);
    } catch (java.sql.SQLException e) {
      throw new IOException("PostgreSQL on " + LOOPBACK + ":" + port + " did not answer after its start", e);
    }
    Path servedDir = Path.of(served);
    if (!Files.exists(servedDir) || !Files.isSameFile(servedDir, dataDir)) {
      throw new IOException("port " + port + " is held by another PostgreSQL (data directory " + served
          + "), not the one started on " + dataDir + "; choose another port");
    }
  }

  private static String jdbcUrl(int port) {
    return "jdbc:postgresql://" + LOOPBACK + ":" + port + "/postgres?user=postgres";
  }

  public String jdbcUrl() {
    return jdbcUrl(postgres.getPort());
  }

  public int port() {
    return postgres.getPort();
  }

  public boolean durable() {
    return durable;
  }

  /** The postmaster's pid while it runs (the one in postmaster.pid). */
  public long pid() {
    return current().pid();
  }

  public State state() {
    Postmaster p = current();
    Instant down = downSince;
    return new State(down == null && p.alive(), p.pid(), postgres.getPort(), down, restarts, gaveUp, supervised);
  }

  /**
   * The postmaster process for a process manager: unhealthy at once while it is down (the pool's
   * check only answers after its connection timeout), and after the supervisor gave up.
   */
  public com.codahale.metrics.health.HealthCheck healthCheck() {
    return new com.codahale.metrics.health.HealthCheck() {
      @Override
      protected Result check() {
        State s = state();
        if (s.up()) {
          return Result.builder().healthy().withMessage("postmaster pid " + s.pid() + " on port " + s.port())
              .withDetail("restarts", s.restarts()).withDetail("supervised", s.supervised()).build();
        }
        String why = s.gaveUp() ? "postmaster died " + MAX_RESTARTS + " times within " + RESTART_WINDOW.toMinutes()
            + " min and is not restarted again: restart the service"
            : !s.supervised() ? "postmaster pid " + s.pid() + " is not running (not supervised)"
            : "postmaster pid " + s.pid() + " is down" + (s.downSince() == null ? "" : " since " + s.downSince())
                + "; restarting it";
        return Result.builder().unhealthy().withMessage(why).withDetail("restarts", s.restarts())
            .withDetail("supervised", s.supervised()).build();
      }
    };
  }

  /**
   * The tracked postmaster, or the live one postmaster.pid names once the tracked one died: a
   * postmaster started by a {@code pg_ctl start} that gave up waiting for its crash recovery, or by
   * an operator (unsupervised, X-01 and X-05 start it themselves). Not synchronized: the health
   * check must answer while a restart holds the lock; both writers store a live postmaster.
   */
  private Postmaster current() {
    Postmaster p = running;
    if (p.alive()) return p;
    Optional<Postmaster> live = liveInPidFile(p);
    if (live.isEmpty()) return p;
    if (running == p) running = live.get();
    return live.get();
  }

  /** The postmaster postmaster.pid names, if it runs (not a zombie) and is not the dead one. */
  private Optional<Postmaster> liveInPidFile(Postmaster dead) {
    try {
      Optional<Long> pid = pidInFile(dataDir);
      if (pid.isEmpty() || pid.get() == dead.pid() || !running(pid.get())) return Optional.empty();
      Postmaster found = Postmaster.read(dataDir);
      return found.pid() == pid.get() && found.alive() ? Optional.of(found) : Optional.empty();
    } catch (IOException | RuntimeException gone) {
      return Optional.empty(); // it exited, or the file changed while read: the next look sees it
    }
  }

  /** One poll of the watcher: a dead postmaster is started again, unless the service stops. */
  private synchronized void check() {
    try {
      if (stopping || gaveUp) return;
      Postmaster p = current();
      if (p.alive()) {
        if (downSince != null) {
          log.warn("embedded PostgreSQL runs again: postmaster pid {} on port {}, {} ms after the last one died"
              + " (found in postmaster.pid)", p.pid(), postgres.getPort(),
              Duration.between(downSince, Instant.now()).toMillis());
          downSince = null;
        }
        return;
      }
      if (downSince == null) downSince = Instant.now();
      log.error("embedded PostgreSQL's postmaster pid {} died while the service runs; starting it again on port {}"
          + " (data dir {})", p.pid(), postgres.getPort(), dataDir);
      Instant now = Instant.now();
      while (!recentRestarts.isEmpty() && recentRestarts.peekFirst().isBefore(now.minus(RESTART_WINDOW))) {
        recentRestarts.removeFirst();
      }
      if (recentRestarts.size() >= MAX_RESTARTS) {
        gaveUp = true;
        log.error("embedded PostgreSQL died {} times within {} min; not restarting it again: restart the service"
            + " (its log: {})", recentRestarts.size(), RESTART_WINDOW.toMinutes(), restartLog);
        return;
      }
      recentRestarts.addLast(now);
      restarts++;
      Postmaster next = startAgain(p, p.options());
      running = next;
      long downMs = Duration.between(downSince, Instant.now()).toMillis();
      downSince = null;
      log.warn("embedded PostgreSQL restarted: postmaster pid {} on port {}, {} ms after pid {} died (restart {};"
          + " crash recovery replayed the WAL, see {})", next.pid(), postgres.getPort(), downMs, p.pid(), restarts,
          restartLog);
    } catch (IOException e) {
      if (stopping) {
        log.info("embedded PostgreSQL not restarted: the service stops");
        return;
      }
      // the next poll tries again (and counts it); the health check shows the database down meanwhile
      log.error("embedded PostgreSQL could not be restarted: {}", e.getMessage());
    } catch (RuntimeException e) {
      log.error("embedded PostgreSQL supervision failed", e);
    }
  }

  /**
   * Stops PostgreSQL (fast shutdown) and starts it again with fsync and full_page_writes on or
   * off: the bench measures what durability costs. The service sees a short outage.
   */
  public synchronized void restartWith(boolean durable) throws IOException {
    Postmaster p = current();
    pgCtl(p.bin(), List.of("stop", "-m", "fast", "-w", "-t", "60"), Duration.ofSeconds(70));
    List<String> options = withSettings(p.options(), serverConfig(durable));
    running = startAgain(p, options);
    this.durable = durable;
    log.warn("embedded PostgreSQL restarted with fsync {} (pid {}, port {})", durable ? "on" : "off",
        running.pid(), postgres.getPort());
  }

  /** The postmaster's options with {@code -c name=value} for each setting, replacing earlier ones of the same name. */
  static List<String> withSettings(List<String> options, Map<String, String> settings) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < options.size(); i++) {
      String o = options.get(i);
      if (o.equals("-c") && i + 1 < options.size()) {
        String next = options.get(i + 1);
        int eq = next.indexOf('=');
        if (eq > 0 && settings.containsKey(next.substring(0, eq))) {
          i++;
          continue;
        }
      }
      out.add(o);
    }
    settings.forEach((k, v) -> out.addAll(List.of("-c", k + "=" + v)));
    return out;
  }

  /**
   * pg_ctl start on the same directory and options until it succeeds: the first attempts fail
   * while a backend of the dead postmaster still holds the shared memory (PostgreSQL's own guard).
   */
  private Postmaster startAgain(Postmaster dead, List<String> options) throws IOException {
    long deadline = System.nanoTime() + START_DEADLINE.toNanos();
    String lastFailure = "";
    int attempts = 0;
    while (true) {
      if (stopping) throw new IOException("the service is stopping");
      // an earlier attempt whose pg_ctl gave up waiting (a long crash recovery), or an operator, may have
      // started one: every further pg_ctl start would fail on its lock file
      Optional<Postmaster> live = liveInPidFile(dead);
      if (live.isPresent()) {
        log.info("embedded PostgreSQL postmaster pid {} is coming up (found in postmaster.pid, attempt {})",
            live.get().pid(), attempts);
        return live.get();
      }
      attempts++;
      List<String> args = List.of("-l", restartLog.toString(), "-w", "-t", String.valueOf(startWaitSeconds), "-o",
          shellWords(options), "start");
      long logBefore = Files.exists(restartLog) ? Files.size(restartLog) : 0;
      String failure = pgCtl(dead.bin(), args, Duration.ofSeconds(startWaitSeconds + 10L)) == 0 ? null
          : lastOutput(logBefore);
      if (failure == null) {
        Postmaster next = Postmaster.read(dataDir);
        if (next.pid() != dead.pid()) {
          if (attempts > 1) log.info("embedded PostgreSQL started at attempt {}", attempts);
          return next;
        }
        failure = "postmaster.pid still names the old pid " + dead.pid();
      }
      if (!failure.equals(lastFailure)) log.info("embedded PostgreSQL did not start yet (attempt {}): {}", attempts, failure);
      lastFailure = failure;
      if (System.nanoTime() > deadline) {
        throw new IOException("no start within " + START_DEADLINE.toSeconds() + " s; last: " + failure + " (log "
            + restartLog + ")");
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while restarting PostgreSQL", e);
      }
    }
  }

  /**
   * pg_ctl's -o is put into a {@code /bin/sh} command line as it is: each option single-quoted, so a
   * value with spaces or quotes stays one argument of the postmaster.
   */
  public static String shellWords(List<String> options) {
    List<String> quoted = new ArrayList<>();
    for (String o : options) quoted.add("'" + o.replace("'", "'\\''") + "'");
    return String.join(" ", quoted);
  }

  private Path pgCtlOutput() {
    return dataDir.resolveSibling(dataDir.getFileName() + "-pg_ctl.out");
  }

  /** Why the last start failed: the server's own FATAL line if it wrote one, else what pg_ctl said. */
  private String lastOutput(long logBefore) {
    try {
      if (Files.exists(restartLog) && Files.size(restartLog) > logBefore) {
        byte[] all = Files.readAllBytes(restartLog);
        List<String> log = new String(all, (int) logBefore, all.length - (int) logBefore, StandardCharsets.UTF_8).lines().toList();
        for (int i = log.size() - 1; i >= Math.max(0, log.size() - 20); i--) {
          if (log.get(i).contains("FATAL")) return log.get(i).trim();
        }
      }
      List<String> lines = Files.readAllLines(pgCtlOutput(), StandardCharsets.UTF_8);
      return lines.isEmpty() ? "(no output)" : String.join(" | ", lines.subList(Math.max(0, lines.size() - 3), lines.size()));
    } catch (IOException e) {
      return "(no output: " + e.getMessage() + ")";
    }
  }

  /** pg_ctl -D &lt;dir&gt; args, as zonky runs it (in a user namespace when root, which pg_ctl refuses). */
  private int pgCtl(Path bin, List<String> args, Duration timeout) throws IOException {
    List<String> cmd = new ArrayList<>();
    if (LinuxUtils.isUnshareAvailable()) cmd.addAll(List.of("unshare", "-U"));
    cmd.addAll(List.of(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString()));
    cmd.addAll(args);
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(pgCtlOutput().toFile()).start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IOException("pg_ctl " + args.get(args.size() - 1) + " did not return within " + timeout.toSeconds()
            + " s");
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted in pg_ctl", e);
    }
    return p.exitValue();
  }

  /** Ends supervision (a start attempt under way finishes first), then stops PostgreSQL. */
  @Override
  public void close() throws IOException {
    stopping = true; // before the lock: a restart under way gives up between its attempts
    // not interrupted: a pg_ctl start cut short could leave a postmaster coming up after the stop below
    if (watcher != null) watcher.shutdown();
    synchronized (this) {
      postgres.close();
    }
  }

  static Optional<Long> pidInFile(Path dataDir) throws IOException {
    Path pidFile = dataDir.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) return Optional.empty();
    List<String> lines = Files.readAllLines(pidFile);
    if (lines.isEmpty()) return Optional.empty();
    try {
      return Optional.of(Long.parseLong(lines.get(0).trim()));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
