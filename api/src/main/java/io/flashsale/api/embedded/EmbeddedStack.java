package io.flashsale.api.embedded;

import io.flashsale.channel.ChannelStub;
import io.temporal.testserver.TestServer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The laptop stack in one JVM: PostgreSQL (zonky binaries), the Temporal service from
 * temporal-testing bound to a real port, and the channel stub. Stopped in reverse order.
 */
public final class EmbeddedStack implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedStack.class);

  private final EmbeddedPostgres postgres;
  private final TestServer.PortBoundTestServer temporal;
  private final ChannelStub channel;
  private final File dataDir;

  private EmbeddedStack(EmbeddedPostgres postgres, TestServer.PortBoundTestServer temporal, ChannelStub channel,
      File dataDir) {
    this.postgres = postgres;
    this.temporal = temporal;
    this.channel = channel;
    this.dataDir = dataDir;
  }

  public static EmbeddedStack start(int pgPort, String pgDataDir, int temporalPort, String channelHost,
      int channelPort, String callbackSecret) throws IOException {
    File dir = pgDataDir == null || pgDataDir.isBlank()
        ? Files.createTempDirectory("flashsale-pg").toFile()
        : new File(pgDataDir).getAbsoluteFile();
    dir.mkdirs();
    EmbeddedPostgres.Builder pg = EmbeddedPostgres.builder().setDataDirectory(dir).setCleanDataDirectory(false);
    if (pgPort > 0) pg.setPort(pgPort);
    EmbeddedPostgres postgres = pg.start();
    log.info("embedded PostgreSQL on port {} (data dir {})", postgres.getPort(), dir);
    TestServer.PortBoundTestServer temporal = TestServer.createPortBoundServer(temporalPort);
    log.info("embedded Temporal service on port {}", temporalPort);
    ChannelStub channel = ChannelStub.start(channelHost, channelPort,
        callbackSecret == null || callbackSecret.isBlank() ? null : callbackSecret);
    log.info("channel stub at {}", channel.baseUrl());
    return new EmbeddedStack(postgres, temporal, channel, dir);
  }

  public String jdbcUrl() {
    return postgres.getJdbcUrl("postgres", "postgres");
  }

  public String channelUrl() {
    return channel.baseUrl();
  }

  public File dataDir() {
    return dataDir;
  }

  @Override
  public void close() {
    channel.stop();
    temporal.close();
    try {
      postgres.close();
    } catch (IOException e) {
      log.warn("embedded PostgreSQL did not stop cleanly", e);
    }
  }
}
