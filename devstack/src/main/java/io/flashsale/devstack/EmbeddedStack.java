package io.flashsale.devstack;

import io.flashsale.channel.ChannelStub;
import io.flashsale.launcher.FlashsaleConfiguration;
import io.flashsale.launcher.LocalStack;
import io.flashsale.launcher.TemporalEngine;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local default: PostgreSQL (zonky binaries) with its data directory in the data folder, the
 * Temporal engine (the dev server as a supervised child, or the in-memory test server), and the
 * channel stub with its ledger in the data folder. Stopped in reverse order, after the service
 * drained (it is managed first, so Dropwizard stops it last).
 */
public final class EmbeddedStack implements LocalStack {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedStack.class);

  private final SupervisedPostgres postgres;
  private final DevServer devServer;
  private final LoopbackTestServer testServer;
  private final ChannelStub channel;
  private final File dataDir;
  private final File postgresDir;
  private final java.nio.channels.FileChannel lockFile;
  private final TemporalEngine engine;
  private final int temporalPort;

  /** PostgreSQL's port when this stack reserved it (port 0 configured), released at close; else 0. */
  private final int reservedPgPort;

  private EmbeddedStack(SupervisedPostgres postgres, DevServer devServer, LoopbackTestServer testServer,
      ChannelStub channel, File dataDir, File postgresDir, TemporalEngine engine, int temporalPort,
      java.nio.channels.FileChannel lockFile, int reservedPgPort) {
    this.postgres = postgres;
    this.reservedPgPort = reservedPgPort;
    this.devServer = devServer;
    this.testServer = testServer;
    this.channel = channel;
    this.dataDir = dataDir;
    this.postgresDir = postgresDir;
    this.lockFile = lockFile;
    this.engine = engine;
    this.temporalPort = temporalPort;
  }

  /** The running local stack as this module's type, for the tools and experiments that drive its pieces. */
  public static EmbeddedStack of(LocalStack stack) {
    return (EmbeddedStack) stack;
  }

  /** The launcher's seam to this module (registered in META-INF/services). */
  public static final class Provider implements LocalStack.Provider {
    @Override
    public TemporalEngine resolve(FlashsaleConfiguration cfg) {
      return EmbeddedStack.resolve(cfg);
    }

    @Override
    public LocalStack start(FlashsaleConfiguration cfg, TemporalEngine engine) throws IOException {
      return EmbeddedStack.start(cfg, engine);
    }
  }

  /**
   * Resolves {@code auto}: the dev server when the temporal CLI is installed, else the in-memory
   * engine, with one line saying what that loses.
   */
  public static TemporalEngine resolve(FlashsaleConfiguration cfg) {
    TemporalEngine wanted = cfg.temporal.engine;
    if (wanted != TemporalEngine.AUTO) return wanted;
    if (!cfg.embedded) return TemporalEngine.EXTERNAL;
    if (TemporalCli.find(cfg.temporal.cliPath).isPresent()) return TemporalEngine.DEV_SERVER;
    Path kept = dataFolder(cfg).resolve("temporal.db");
    if (Files.exists(kept)) {
      // the in-memory engine over a folder whose workflows live in the dev server's file would run
      // every open order twice once the dev server is back
      throw new IllegalStateException(kept.toAbsolutePath() + " holds the dev server's workflows but no temporal CLI"
          + " was found; install it with " + TemporalCli.INSTALL_HINT + " or choose an engine (--engine)");
    }
    log.warn("Temporal: no temporal CLI found, using the IN-MEMORY engine: workflows are lost when the service stops"
        + " (orders stay in PostgreSQL and get new workflows at the next start), no Web UI, no temporal CLI."
        + " For the real server: " + TemporalCli.INSTALL_HINT);
    return TemporalEngine.EMBEDDED;
  }

  /** The local default's data folder, absolute. */
  private static Path dataFolder(FlashsaleConfiguration cfg) {
    return Path.of(cfg.dataDir == null || cfg.dataDir.isBlank() ? "data" : cfg.dataDir).toAbsolutePath();
  }

  /** Starts the local pieces; {@code engine} is already resolved (never AUTO). */
  public static EmbeddedStack start(FlashsaleConfiguration cfg, TemporalEngine engine) throws IOException {
    Path data = dataFolder(cfg);
    Files.createDirectories(data);
    // one service per data folder: only the holder of the lock may treat what it finds as leftovers
    java.nio.channels.FileChannel lockFile = java.nio.channels.FileChannel.open(data.resolve(".flashsale.lock"),
        java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
    java.nio.channels.FileLock lock = lockFile.tryLock();
    if (lock == null) {
      lockFile.close();
      throw new IOException("the data folder " + data + " is in use by another running flashsale; stop it, or give"
          + " this one its own folder (dataDir)");
    }
    try {
      return startLocked(cfg, engine, data, lockFile);
    } catch (IOException | RuntimeException e) {
      lockFile.close();
      throw e;
    }
  }

  private static EmbeddedStack startLocked(FlashsaleConfiguration cfg, TemporalEngine engine, Path data,
      java.nio.channels.FileChannel lockFile) throws IOException {
    DevServer dev = null;
    LoopbackTestServer test = null;
    int temporalPort = cfg.temporal.embeddedPort;
    if (engine == TemporalEngine.DEV_SERVER) {
      Path cli = TemporalCli.find(cfg.temporal.cliPath).orElseThrow(() -> new IOException(
          "temporal.engine is dev-server but no temporal CLI was found; install it with " + TemporalCli.INSTALL_HINT
              + " or set temporal.cliPath"));
      String dbSetting = cfg.temporal.devServerDbFile;
      Path dbFile = "memory".equals(dbSetting) ? null
          : dbSetting == null || dbSetting.isBlank() ? data.resolve("temporal.db") : Path.of(dbSetting).toAbsolutePath();
      var encryption = cfg.temporal.payloadEncryption;
      // the UI decodes through the admin port's codec endpoint, which answers this UI's origin
      String codecEndpoint = encryption.enabled && encryption.codecEndpoint && encryption.devServerUiCodec
          ? "http://127.0.0.1:" + io.flashsale.launcher.FlashsaleApplication.port(cfg, false)
              + io.flashsale.api.codec.CodecServlet.PATH
          : null;
      dev = DevServer.start(new DevServer.Options(cli, cfg.temporal.namespace, temporalPort, cfg.temporal.uiPort,
          dbFile, data, io.flashsale.launcher.TemporalRuntime.SEARCH_ATTRIBUTES, codecEndpoint));
    } else if (engine == TemporalEngine.EMBEDDED) {
      test = LoopbackTestServer.start(temporalPort);
      log.info("in-memory Temporal engine on 127.0.0.1:{}", temporalPort);
    }

    File pgDir = cfg.database.embeddedDataDir == null || cfg.database.embeddedDataDir.isBlank()
        ? data.resolve("postgres").toFile()
        : new File(cfg.database.embeddedDataDir).getAbsoluteFile();
    pgDir.mkdirs();
    SupervisedPostgres postgres = null;
    // port 0: one reserved across processes (LocalPorts), not the first free one PostgreSQL's
    // start finds: that one is free only until another process starting a PostgreSQL finds it too
    int reservedPgPort = 0;
    try {
      if (cfg.database.embeddedPort == 0) reservedPgPort = LocalPorts.shared().reserve();
      int pgPort = reservedPgPort > 0 ? reservedPgPort : cfg.database.embeddedPort;
      stopLeftoverPostmaster(pgDir.toPath());
      postgres = SupervisedPostgres.start(new SupervisedPostgres.Settings(pgDir.toPath(), pgPort,
          cfg.database.embeddedDurable, cfg.database.superviseEmbedded));

      // the service's own merchant key and callback URL: the stub answers and calls back nobody else;
      // its lab endpoints (faults, release, reset) are on while it is bound to loopback
      ChannelStub channel = ChannelStub.start(new ChannelStub.Settings(cfg.channel.host, cfg.channel.embeddedPort,
          cfg.channel.merchantKey, cfg.channel.callbackSecret, java.util.Set.of(cfg.channel.notifyUrl), null,
          data.resolve("channel-ledger.jsonl")));
      log.info("channel stub at {} (ledger {})", channel.baseUrl(), data.resolve("channel-ledger.jsonl"));
      return new EmbeddedStack(postgres, dev, test, channel, data.toFile(), pgDir, engine, temporalPort, lockFile,
          reservedPgPort);
    } catch (IOException | RuntimeException e) {
      // children run in their own process groups: a failed start must not leave them behind
      if (postgres != null) postgres.close();
      if (dev != null) dev.close();
      if (test != null) test.close();
      if (reservedPgPort > 0) LocalPorts.shared().release(reservedPgPort);
      throw e;
    }
  }

  /**
   * A postmaster left running by a JVM that was killed holds the data directory: stop it (fast
   * shutdown) so this start can take over; a stale pid file alone PostgreSQL handles itself.
   */
  static void stopLeftoverPostmaster(Path pgDir) throws IOException {
    Path pidFile = pgDir.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) return;
    List<String> lines = Files.readAllLines(pidFile);
    if (lines.isEmpty()) return;
    long pid;
    try {
      pid = Long.parseLong(lines.get(0).trim());
    } catch (NumberFormatException e) {
      return;
    }
    Optional<ProcessHandle> h = ProcessHandle.of(pid);
    if (h.isEmpty() || !h.get().isAlive()) return;
    String command = h.get().info().commandLine().orElse("");
    if (!command.contains("postgres") || !command.contains(pgDir.toString())) return; // not our postmaster
    log.warn("stopping the PostgreSQL left running by an earlier start (pid {}, {})", pid, pgDir);
    try {
      new ProcessBuilder("kill", "-INT", String.valueOf(pid)).inheritIO().start().waitFor();
      h.get().onExit().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      h.get().destroyForcibly();
    }
  }

  @Override
  public boolean postgresDurable() {
    return postgres.durable();
  }

  @Override
  public com.codahale.metrics.health.HealthCheck postgresProcessCheck() {
    return postgres.healthCheck();
  }

  @Override
  public TemporalEngine engine() {
    return engine;
  }

  /** The frontend of the local engine. */
  @Override
  public String temporalTarget() {
    return "127.0.0.1:" + temporalPort;
  }

  @Override
  public Optional<String> webUi() {
    return devServer == null ? Optional.empty() : devServer.uiUrl();
  }

  public Optional<DevServer> devServer() {
    return Optional.ofNullable(devServer);
  }

  @Override
  public String jdbcUrl() {
    return postgres.jdbcUrl();
  }

  /** The local PostgreSQL (its postmaster, durability and supervision). */
  public SupervisedPostgres postgres() {
    return postgres;
  }

  @Override
  public String channelUrl() {
    return channel.baseUrl();
  }

  @Override
  public File dataDir() {
    return dataDir;
  }

  @Override
  public File postgresDir() {
    return postgresDir;
  }

  @Override
  public void close() {
    log.info("service drained; stopping the local pieces (channel stub, Temporal, PostgreSQL)");
    channel.stop();
    if (testServer != null) testServer.close();
    if (devServer != null) devServer.close();
    try {
      postgres.close();
      if (reservedPgPort > 0) LocalPorts.shared().release(reservedPgPort);
    } catch (IOException e) {
      log.warn("embedded PostgreSQL did not stop cleanly", e); // its port stays reserved: it may still listen
    }
    try {
      lockFile.close(); // releases the folder's lock
    } catch (IOException e) {
      log.warn("data folder lock not released cleanly", e);
    }
    log.info("local pieces stopped; data kept in {}", dataDir);
  }
}
