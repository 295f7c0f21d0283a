package io.flashsale.devstack.cluster;

import io.flashsale.devstack.LocalPorts;
import io.flashsale.devstack.SupervisedPostgres;
import io.flashsale.devstack.TemporalCli;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The production shape on one machine (docs/DESIGN.md §The production shape on one machine): a
 * PostgreSQL for Temporal (zonky's binaries, supervised), the Temporal server (PostgreSQL
 * persistence, SQL visibility), the Web UI server and the service, each a child process in its own
 * process group, from the binaries of {@code ./flashsale install-cluster} and the same
 * configuration files docker/compose.yaml mounts (docker/temporal/...). Stopped in reverse order.
 */
public final class Cluster implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Cluster.class);
  /** The server and UI versions {@code ./flashsale install-cluster} pins (the ones the pinned CLI carries). */
  public static final String SERVER_VERSION = "v1.29.1";
  public static final String UI_SERVER_VERSION = "v2.42.1";
  public static final String INSTALL_HINT = "./flashsale install-cluster (builds the Temporal server " + SERVER_VERSION
      + ", its SQL tool and the UI server " + UI_SERVER_VERSION + " into .tools/cluster)";
  public static final String NAMESPACE = "default";
  public static final String RETENTION = "72h";
  /** The files docker/compose.yaml mounts into its Temporal containers, relative to the project. */
  public static final String SERVER_CONFIG_DIR = "docker/temporal/config";
  public static final String SERVER_CONFIG_ENV = "flashsale";
  public static final String DYNAMIC_CONFIG = "docker/temporal/dynamicconfig.yaml";
  public static final String SCHEMA_SCRIPT = "docker/temporal/setup-schema.sh";
  public static final String SETUP_SCRIPT = "docker/temporal-setup.sh";
  public static final String UI_CONFIG_DIR = "docker/temporal/ui";
  public static final String CERTS_SCRIPT = "docker/temporal/make-certs.sh";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);
  /**
   * The service's own bound: a JVM that starts its database, workers and API, then warms its hot path
   * for warmUp.duration (10 s) before its health check passes. Here 19 s idle and 27-56 s beside the
   * whole test suite; a CI machine under the suite went past 90 s.
   */
  private static final Duration SERVICE_START_TIMEOUT = Duration.ofSeconds(180);

  /**
   * Where it keeps its state and which ports it uses; {@code temporalPort} is the frontend, the
   * server's other services take the next ports (see {@link #serverEnvironment}). Port 0: a free one.
   */
  public record Settings(Path home, Path dataDir, int temporalPort, int uiPort, int apiPort, int adminPort,
      boolean service) {}

  /**
   * The deployment's certificates ({@value #CERTS_SCRIPT}): the frontend admits only a client
   * holding one of them (mutual TLS), and every client checks the server by the name
   * {@value #SERVER_NAME}. Clients: {@code service}, {@code operator}, {@code web-ui}.
   */
  public record Tls(Path dir) {
    public static final String SERVER_NAME = "temporal";

    public Path ca() {
      return dir.resolve("ca.pem");
    }

    public Path cert(String client) {
      return dir.resolve(client + ".pem");
    }

    public Path key(String client) {
      return dir.resolve(client + ".key");
    }

    /** What the temporal CLI reads from its environment for these flags. */
    public Map<String, String> cliEnvironment(String client) {
      Map<String, String> env = new LinkedHashMap<>();
      env.put("TEMPORAL_TLS_CLIENT_CERT_PATH", cert(client).toString());
      env.put("TEMPORAL_TLS_CLIENT_KEY_PATH", key(client).toString());
      env.put("TEMPORAL_TLS_SERVER_CA_CERT_PATH", ca().toString());
      env.put("TEMPORAL_TLS_SERVER_NAME", SERVER_NAME);
      return env;
    }

    /** The temporal CLI's flags for {@code client}'s certificate. */
    public List<String> cliArgs(String client) {
      return List.of("--tls-cert-path", cert(client).toString(), "--tls-key-path", key(client).toString(),
          "--tls-ca-path", ca().toString(), "--tls-server-name", SERVER_NAME);
    }

    /** The service's {@code temporal.tls} settings for {@code client}'s certificate, as configuration keys. */
    public Map<String, String> serviceSettings(String client) {
      Map<String, String> p = new LinkedHashMap<>();
      p.put("temporal.tls.enabled", "true");
      p.put("temporal.tls.caCertFile", ca().toString());
      p.put("temporal.tls.clientCertFile", cert(client).toString());
      p.put("temporal.tls.clientKeyFile", key(client).toString());
      p.put("temporal.tls.serverName", SERVER_NAME);
      return p;
    }
  }

  /** The installed pieces, found under {@code <home>/.tools/cluster}. */
  public record Binaries(Path server, Path sqlTool, Path uiServer, Path schemaDir, Path cli) {
    public static Binaries find(Path home) {
      Path dir = home.resolve(".tools/cluster");
      Binaries b = new Binaries(dir.resolve("temporal-server"), dir.resolve("temporal-sql-tool"),
          dir.resolve("ui-server"), dir.resolve("schema-" + SERVER_VERSION),
          TemporalCli.find(null).orElse(home.resolve(".tools/bin/temporal")));
      List<String> missing = new ArrayList<>();
      for (Path p : List.of(b.server, b.sqlTool, b.uiServer, b.cli)) if (!Files.isExecutable(p)) missing.add(p.toString());
      if (!Files.isDirectory(b.schemaDir.resolve("postgresql/v12/temporal/versioned"))) missing.add(b.schemaDir.toString());
      if (!missing.isEmpty()) {
        throw new IllegalStateException("missing " + String.join(", ", missing) + ": install them with " + INSTALL_HINT
            + " and ./flashsale install-temporal");
      }
      return b;
    }
  }

  private final Settings settings;
  private final Consumer<String> progress;
  private final Deque<AutoCloseable> started = new ArrayDeque<>();
  private boolean closed;
  private SupervisedPostgres postgres;
  private volatile Child server;
  private List<String> serverCommand;
  private Map<String, String> serverEnv;
  private Path serverLog;
  private Path cli;
  private int temporalPort;
  private int uiPort;
  private int apiPort;
  private int adminPort;
  private int channelPort;
  private int consumerPort;
  private Tls tls;
  private Path adminTokenFile;
  /** The ports this cluster took from the shared reservations: given back when it closes. */
  private final List<Integer> reserved = new java.util.ArrayList<>();

  private Cluster(Settings settings, Consumer<String> progress) {
    this.settings = settings;
    this.progress = progress;
  }

  /** Starts every piece, or stops what it started and throws; each step is told to {@code progress}. */
  public static Cluster start(Settings settings, Consumer<String> progress) throws IOException {
    return start(settings, progress, false);
  }

  /**
   * The same; with {@code stopAtExit} the JVM's exit (Ctrl-C) stops what started even during the
   * start, so no child (each in its own process group) outlives an interrupted start.
   */
  public static Cluster start(Settings settings, Consumer<String> progress, boolean stopAtExit) throws IOException {
    return start(settings, progress, stopAtExit ? () -> { } : null);
  }

  /**
   * Stopped at this JVM's exit, from before its first process starts (a Ctrl-C during the start
   * leaves none behind), then {@code afterStopAtExit} runs (a caller's folder deleted once nothing
   * uses it); null: not stopped at exit.
   */
  public static Cluster start(Settings settings, Consumer<String> progress, Runnable afterStopAtExit) throws IOException {
    Cluster c = new Cluster(settings, progress);
    if (afterStopAtExit != null) {
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        c.close();
        afterStopAtExit.run();
      }, "cluster-stop"));
    }
    try {
      c.startAll(Binaries.find(settings.home()));
      return c;
    } catch (IOException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  private void startAll(Binaries bin) throws IOException {
    Path data = settings.dataDir().toAbsolutePath();
    Path logs = data.resolve("logs");
    Files.createDirectories(logs);
    temporalPort = settings.temporalPort() > 0 ? settings.temporalPort() : freeServerPorts();
    uiPort = settings.uiPort() > 0 ? settings.uiPort() : freePort();
    apiPort = settings.apiPort() > 0 ? settings.apiPort() : freePort();
    adminPort = settings.adminPort() > 0 ? settings.adminPort() : freePort();
    channelPort = freePort();
    consumerPort = freePort();

    long t0 = System.nanoTime();
    tls = new Tls(data.resolve("tls"));
    // keys owner-only, whatever the caller's environment says
    run(List.of("sh", settings.home().resolve(CERTS_SCRIPT).toString(), tls.dir().toString()), Map.of("KEYS_READABLE", "0"),
        logs.resolve("certificates.log"), Duration.ofSeconds(60), "the certificates");
    step("certificates of the deployment's CA in " + tls.dir() + " (" + CERTS_SCRIPT + ")", t0);
    postgres = SupervisedPostgres.start(new SupervisedPostgres.Settings(data.resolve("temporal-postgres"), freePort(), true, true));
    started(postgres);
    String password = localPassword(data.resolve("temporal-db-password"));
    createDatabases(password);
    step("PostgreSQL for Temporal on 127.0.0.1:" + postgres.port() + ", databases temporal and temporal_visibility", t0);

    Map<String, String> env = serverEnvironment(temporalPort, postgres.port(), password);
    env.put("TEMPORAL_DYNAMIC_CONFIG_FILE", settings.home().resolve(DYNAMIC_CONFIG).toString());
    env.put("TEMPORAL_TLS_DIR", tls.dir().toString());
    Path schemaMark = data.resolve("temporal-postgres-schema-" + SERVER_VERSION);
    if (!Files.exists(schemaMark)) {
      Map<String, String> schemaEnv = new LinkedHashMap<>(env);
      schemaEnv.put("SQL_TOOL", bin.sqlTool().toString());
      schemaEnv.put("SCHEMA_DIR", bin.schemaDir().toString());
      run(List.of("sh", settings.home().resolve(SCHEMA_SCRIPT).toString()), schemaEnv,
          logs.resolve("temporal-schema.log"), Duration.ofSeconds(120), "the Temporal schema setup");
      Files.writeString(schemaMark, "schemas of " + SERVER_VERSION + " applied\n");
      step("Temporal schemas set up with the SQL tool (" + SCHEMA_SCRIPT + ")", t0);
    } else {
      step("Temporal schemas of " + SERVER_VERSION + " already set up (" + schemaMark.getFileName() + ")", t0);
    }

    serverCommand = List.of(bin.server().toString(), "--root", settings.home().toString(),
        "--config", SERVER_CONFIG_DIR, "--env", SERVER_CONFIG_ENV, "--allow-no-auth", "start");
    serverEnv = env;
    serverLog = logs.resolve("temporal-server.log");
    cli = bin.cli();
    server = Child.start("Temporal server", serverCommand, serverEnv, serverLog);
    // the server is restarted in place (restartTemporalServer): the stop takes whichever runs then
    started(new AutoCloseable() {
      @Override
      public void close() throws Exception {
        server.close();
      }

      @Override
      public String toString() {
        return server.toString();
      }
    });
    String address = temporalAddress();
    awaitServing(server);
    step("Temporal server " + SERVER_VERSION + " serving on " + address + ", mutual TLS (pid " + server.pid() + ")", t0);

    Map<String, String> setupEnv = new LinkedHashMap<>();
    setupEnv.put("PATH", bin.cli().getParent() + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
    setupEnv.put("TEMPORAL_ADDRESS", address);
    setupEnv.put("TEMPORAL_NAMESPACE", NAMESPACE);
    setupEnv.put("TEMPORAL_NAMESPACE_RETENTION", RETENTION);
    setupEnv.putAll(tls.cliEnvironment("operator"));
    run(List.of("sh", settings.home().resolve(SETUP_SCRIPT).toString()), setupEnv,
        logs.resolve("temporal-setup.log"), Duration.ofSeconds(200), "the namespace and search attribute setup");
    step("namespace " + NAMESPACE + " (retention " + RETENTION + ") and search attributes (" + SETUP_SCRIPT + ")", t0);

    Map<String, String> uiEnv = new LinkedHashMap<>();
    uiEnv.put("TEMPORAL_ADDRESS", address);
    uiEnv.put("TEMPORAL_UI_PORT", String.valueOf(uiPort));
    uiEnv.put("TEMPORAL_DEFAULT_NAMESPACE", NAMESPACE);
    uiEnv.put("TEMPORAL_TLS_CA", tls.ca().toString());
    uiEnv.put("TEMPORAL_TLS_CERT", tls.cert("web-ui").toString());
    uiEnv.put("TEMPORAL_TLS_KEY", tls.key("web-ui").toString());
    uiEnv.put("TEMPORAL_TLS_SERVER_NAME", Tls.SERVER_NAME);
    uiEnv.put("TEMPORAL_DISABLE_WRITE_ACTIONS", System.getenv().getOrDefault("TEMPORAL_UI_DISABLE_WRITE_ACTIONS", "true"));
    Child ui = started(Child.start("Web UI server", List.of(bin.uiServer().toString(), "--root", settings.home().toString(),
        "--config", UI_CONFIG_DIR, "--env", SERVER_CONFIG_ENV, "start"), uiEnv, logs.resolve("ui-server.log")));
    awaitTrue(() -> ui.alive() && httpOk("http://127.0.0.1:" + uiPort + "/"), "the Web UI on port " + uiPort, ui);
    step("Web UI server " + UI_SERVER_VERSION + " on " + webUi() + " (pid " + ui.pid() + ")", t0);

    adminTokenFile = data.resolve("admin-token");
    String adminToken = localPassword(adminTokenFile);
    if (settings.service()) {
      Child service = started(Child.start("flashsale service", serviceCommand(address, data.resolve("service")),
          Map.of("FLASHSALE_ADMIN_TOKEN", adminToken), logs.resolve("service.log")));
      awaitTrue(() -> service.alive() && httpOk("http://127.0.0.1:" + adminPort + "/healthcheck"),
          "the service's health check on port " + adminPort, service, SERVICE_START_TIMEOUT);
      step("service (API and workers, engine external) on " + api() + " (pid " + service.pid() + ")", t0);
    }
  }

  /** Waits until the server's frontend answers the CLI's health check. */
  private void awaitServing(Child child) throws IOException {
    String address = temporalAddress();
    List<String> health = new ArrayList<>(List.of(cli.toString(), "operator", "cluster", "health", "--address", address));
    health.addAll(tls.cliArgs("operator"));
    awaitTrue(() -> child.alive() && quiet(health), "the Temporal server to serve on " + address, child);
  }

  /**
   * SIGKILLs the Temporal server's process group, as a crash would, and starts it again with the
   * same command, configuration and ports; returns once its frontend answers. Its state is all in
   * PostgreSQL: nothing else is restored.
   */
  public synchronized long restartTemporalServer() throws IOException, InterruptedException {
    if (closed) throw new IllegalStateException("the cluster is stopping");
    long before = server.pid();
    server.kill();
    server = Child.start("Temporal server", serverCommand, serverEnv, serverLog);
    awaitServing(server);
    log.info("Temporal server restarted: pid {} killed, pid {} serving", before, server.pid());
    return server.pid();
  }

  /** The running Temporal server's pid (its CPU time is in /proc/&lt;pid&gt;/stat). */
  public long temporalServerPid() {
    return server.pid();
  }

  /** The postmaster of Temporal's PostgreSQL (its backends are its children). */
  public long temporalPostgresPid() {
    return postgres.pid();
  }

  /**
   * What docker/temporal/config/flashsale.yaml reads: the database, and the server's ports from the
   * frontend's on (history +1, matching +2, worker +6, HTTP +10; membership: the same offsets from +20).
   */
  static Map<String, String> serverEnvironment(int frontendPort, int dbPort, String password) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("TEMPORAL_DB_HOST", "127.0.0.1");
    env.put("TEMPORAL_DB_PORT", String.valueOf(dbPort));
    env.put("TEMPORAL_DB_USER", "temporal");
    env.put("TEMPORAL_DB_PASSWORD", password);
    env.put("TEMPORAL_BIND_IP", "127.0.0.1");
    env.put("TEMPORAL_FRONTEND_PORT", String.valueOf(frontendPort));
    env.put("TEMPORAL_HISTORY_PORT", String.valueOf(frontendPort + 1));
    env.put("TEMPORAL_MATCHING_PORT", String.valueOf(frontendPort + 2));
    env.put("TEMPORAL_WORKER_PORT", String.valueOf(frontendPort + 6));
    env.put("TEMPORAL_FRONTEND_HTTP_PORT", String.valueOf(frontendPort + 10));
    env.put("TEMPORAL_FRONTEND_MEMBERSHIP_PORT", String.valueOf(frontendPort + 20));
    env.put("TEMPORAL_HISTORY_MEMBERSHIP_PORT", String.valueOf(frontendPort + 21));
    env.put("TEMPORAL_MATCHING_MEMBERSHIP_PORT", String.valueOf(frontendPort + 22));
    env.put("TEMPORAL_WORKER_MEMBERSHIP_PORT", String.valueOf(frontendPort + 26));
    env.put("TEMPORAL_METRICS_ADDRESS", "127.0.0.1:" + (frontendPort + 30));
    return env;
  }

  /** The service as its own JVM: the local default (embedded.yml) on the external engine, this cluster. */
  private List<String> serviceCommand(String temporalAddress, Path serviceData) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Dflashsale.home=" + settings.home());
    cmd.add("-Ddw.temporal.engine=external");
    cmd.add("-Ddw.temporal.target=" + temporalAddress);
    cmd.add("-Ddw.dataDir=" + serviceData);
    cmd.add("-Ddw.server.applicationConnectors[0].port=" + apiPort);
    cmd.add("-Ddw.server.adminConnectors[0].port=" + adminPort);
    cmd.add("-Ddw.channel.embeddedPort=" + channelPort);
    cmd.add("-Ddw.consumer.port=" + consumerPort);
    tls.serviceSettings("service").forEach((key, value) -> cmd.add("-Ddw." + key + "=" + value));
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add("io.flashsale.launcher.FlashsaleApplication");
    cmd.add("server");
    cmd.add("embedded.yml");
    return cmd;
  }

  /** The role and databases the Temporal server uses, made once (as docker/postgres-init.sh does). */
  private void createDatabases(String password) throws IOException {
    try (Connection c = DriverManager.getConnection(postgres.jdbcUrl()); Statement s = c.createStatement()) {
      boolean role = s.executeQuery("SELECT 1 FROM pg_roles WHERE rolname = 'temporal'").next();
      if (!role) s.execute("CREATE ROLE temporal LOGIN PASSWORD '" + password.replace("'", "''") + "'");
      for (String db : List.of("temporal", "temporal_visibility")) {
        if (!s.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + db + "'").next()) {
          s.execute("CREATE DATABASE " + db + " OWNER temporal");
        }
      }
    } catch (SQLException e) {
      throw new IOException("creating Temporal's databases: " + e.getMessage(), e);
    }
    String visibility = postgres.jdbcUrl().replaceFirst("/postgres\\?", "/temporal_visibility?");
    try (Connection c = DriverManager.getConnection(visibility); Statement s = c.createStatement()) {
      // the visibility schema's indexes need btree_gin, which only the superuser may create
      s.execute("CREATE EXTENSION IF NOT EXISTS btree_gin");
    } catch (SQLException e) {
      throw new IOException("btree_gin in temporal_visibility: " + e.getMessage(), e);
    }
  }

  /** A password made on the first start and kept beside the data: no fixed default, even locally. */
  private static String localPassword(Path file) throws IOException {
    if (Files.exists(file)) return Files.readString(file).trim();
    byte[] raw = new byte[18];
    new SecureRandom().nextBytes(raw);
    String password = HexFormat.of().formatHex(raw);
    // owner-only, like the data directory beside it
    Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
        java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    Files.writeString(file, password + "\n");
    return password;
  }

  /** The temporal CLI against this cluster with the operator's certificate: {@code temporal <args> --address … --tls-…}. */
  public List<String> cliCommand(String... args) {
    List<String> cmd = new ArrayList<>(List.of(cli.toString()));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--address", temporalAddress()));
    cmd.addAll(tls.cliArgs("operator"));
    return cmd;
  }

  /** The deployment's certificates: the frontend refuses a client without one. */
  public Tls tls() {
    return tls;
  }

  /**
   * The admin credential the service runs with (auth.adminToken), made on the first start and kept
   * beside the data: the admin port's bearer token and the key of an operator's notice proof.
   */
  public String adminToken() throws IOException {
    return Files.readString(adminTokenFile).trim();
  }

  public String temporalAddress() {
    return "127.0.0.1:" + temporalPort;
  }

  public int temporalPostgresPort() {
    return postgres.port();
  }

  /** Superuser JDBC URL of one database of Temporal's PostgreSQL. */
  public String temporalJdbcUrl(String database) {
    return postgres.jdbcUrl().replaceFirst("/postgres\\?", "/" + database + "?");
  }

  public String webUi() {
    return "http://127.0.0.1:" + uiPort;
  }

  public String api() {
    return "http://127.0.0.1:" + apiPort;
  }

  public String admin() {
    return "http://127.0.0.1:" + adminPort;
  }

  /** The lines {@code ./flashsale cluster} prints once everything serves. */
  public String banner() {
    StringBuilder sb = new StringBuilder("\nflashsale, the production shape on one machine:\n");
    if (settings.service()) {
      sb.append("API        ").append(api()).append("\n");
      sb.append("Admin      ").append(admin()).append("\n");
    }
    sb.append("Temporal   ").append(temporalAddress()).append("  (Temporal server ").append(SERVER_VERSION)
        .append(", PostgreSQL persistence + SQL visibility, namespace ").append(NAMESPACE).append(")\n");
    sb.append("Web UI     ").append(webUi()).append("/namespaces/").append(NAMESPACE).append("/workflows\n");
    sb.append("TLS        ").append(tls.dir()).append("  (mutual: the frontend admits only these certificates; the CLI: ")
        .append(String.join(" ", tls.cliArgs("operator"))).append(")\n");
    if (settings.service()) {
      sb.append("Admin key  ").append(adminTokenFile).append("  (FLASHSALE_ADMIN_TOKEN: the admin port, ./flashsale operator-notice)\n");
    }
    sb.append("PostgreSQL 127.0.0.1:").append(postgres.port()).append("  (temporal, temporal_visibility)\n");
    sb.append("Logs       ").append(settings.dataDir().toAbsolutePath().resolve("logs")).append("\n");
    return sb.toString();
  }

  /** Records a started piece; once stopping, stops it at once instead (an exit during the start). */
  private synchronized <T extends AutoCloseable> T started(T piece) {
    if (closed) {
      try {
        piece.close();
      } catch (Exception e) {
        log.warn("stopping {}: {}", piece, e.getMessage());
      }
      throw new IllegalStateException("the cluster is stopping");
    }
    started.push(piece);
    return piece;
  }

  /** Stops what started, newest first: service, UI, Temporal server, PostgreSQL. */
  @Override
  public synchronized void close() {
    closed = true;
    while (!started.isEmpty()) {
      AutoCloseable next = started.pop();
      try {
        next.close();
      } catch (Exception e) {
        log.warn("stopping {}: {}", next, e.getMessage());
      }
    }
    reserved.forEach(LocalPorts.shared()::release);
    reserved.clear();
  }

  private void step(String what, long t0) {
    String line = String.format("[%5.1f s] %s", (System.nanoTime() - t0) / 1e9, what);
    log.info(line);
    progress.accept(line);
  }

  private static long ms(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  /** A child in its own session and process group (setsid), its output in a log file. */
  static final class Child implements AutoCloseable {
    private final String name;
    private final Process process;
    private final Path logFile;

    private Child(String name, Process process, Path logFile) {
      this.name = name;
      this.process = process;
      this.logFile = logFile;
    }

    static Child start(String name, List<String> command, Map<String, String> env, Path logFile) throws IOException {
      List<String> cmd = new ArrayList<>();
      if (Files.isExecutable(Path.of("/usr/bin/setsid"))) cmd.add("/usr/bin/setsid");
      cmd.addAll(command);
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
      pb.environment().putAll(env);
      Process p = pb.start();
      log.info("{} started: pid {} (log {})", name, p.pid(), logFile);
      return new Child(name, p, logFile);
    }

    boolean alive() {
      return process.isAlive();
    }

    long pid() {
      return process.pid();
    }

    Path logFile() {
      return logFile;
    }

    /** SIGTERM to its process group, then SIGKILL after 30 s. */
    @Override
    public void close() throws IOException, InterruptedException {
      if (!process.isAlive()) return;
      signalGroup("TERM");
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        log.warn("{} pid {} did not stop within 30 s: killing its process group", name, process.pid());
        signalGroup("KILL");
        process.waitFor(10, TimeUnit.SECONDS);
      }
      log.info("{} stopped (pid {}, exit {})", name, process.pid(), process.isAlive() ? "?" : process.exitValue());
    }

    /** SIGKILL to its process group; returns once the process is gone. */
    void kill() throws IOException, InterruptedException {
      if (!process.isAlive()) return;
      signalGroup("KILL");
      if (!process.waitFor(10, TimeUnit.SECONDS)) throw new IOException(this + " survived SIGKILL for 10 s");
      log.info("{} killed (SIGKILL, exit {})", name, process.exitValue());
    }

    private void signalGroup(String signal) throws IOException, InterruptedException {
      Process kill = new ProcessBuilder("kill", "-" + signal, "--", "-" + process.pid()).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      if (!kill.waitFor(5, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        if (signal.equals("KILL")) process.destroyForcibly(); else process.destroy();
      }
    }

    @Override
    public String toString() {
      return name + " pid " + process.pid();
    }
  }

  private static void run(List<String> command, Map<String, String> env, Path logFile, Duration timeout, String what)
      throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
    pb.environment().putAll(env);
    Process p = pb.start();
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IOException(what + " did not finish within " + timeout.toSeconds() + " s (log " + logFile + ")");
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted: " + what, e);
    }
    if (p.exitValue() != 0) throw new IOException(what + " failed, exit " + p.exitValue() + ": " + tail(logFile));
  }

  private static boolean quiet(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .start();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      return p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static boolean httpOk(String url) {
    try {
      HttpURLConnection c = (HttpURLConnection) URI.create(url).toURL().openConnection();
      c.setConnectTimeout(1000);
      c.setReadTimeout(5000);
      int status = c.getResponseCode();
      c.disconnect();
      return status == 200;
    } catch (IOException e) {
      return false;
    }
  }

  private static void awaitTrue(BooleanSupplier ready, String what, Child child) throws IOException {
    awaitTrue(ready, what, child, START_TIMEOUT);
  }

  private static void awaitTrue(BooleanSupplier ready, String what, Child child, Duration bound) throws IOException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!ready.getAsBoolean()) {
      if (!child.alive()) throw new IOException(child + " exited while waiting for " + what + ": " + tail(child.logFile()));
      if (System.nanoTime() > deadline) {
        throw new IOException("gave up waiting " + bound.toSeconds() + " s for " + what + " (log "
            + child.logFile() + ")");
      }
      try {
        Thread.sleep(250);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for " + what, e);
      }
    }
  }

  private static String tail(Path logFile) {
    try {
      List<String> lines = Files.readAllLines(logFile);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** A port this cluster holds in the shared reservations (LocalPorts) until it closes. */
  private int freePort() throws IOException {
    int port = LocalPorts.shared().reserve();
    reserved.add(port);
    return port;
  }

  /**
   * A frontend port whose offsets (see {@link #serverEnvironment}) are all free and held too, below
   * 32 768: the server stores its membership port in a PostgreSQL smallint (a higher one stops it
   * at start), and that range is also below Linux's ephemeral ports.
   */
  private int freeServerPorts() throws IOException {
    int[] offsets = {0, 1, 2, 6, 10, 20, 21, 22, 26, 30};
    int base = LocalPorts.shared().reserveBlock(offsets);
    for (int offset : offsets) reserved.add(base + offset);
    return base;
  }
}
