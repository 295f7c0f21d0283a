package io.flashsale.devstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dropwizard.configuration.YamlConfigurationFactory;
import io.dropwizard.core.setup.Bootstrap;
import io.dropwizard.jackson.Jackson;
import io.dropwizard.jersey.validation.Validators;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;
import io.flashsale.launcher.TemporalEngine;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The server's configuration keeps the local PostgreSQL durable; a scratch stack may turn that off
 * and says so (docs/DESIGN.md §Engines and configuration).
 */
class EmbeddedDurabilityTest {
  @TempDir Path dir;

  @Test
  void theServerConfigurationsPostgresqlFlushesEveryCommitToDisk() throws Exception {
    FlashsaleConfiguration cfg = bundled(dir.resolve("server"));
    assertTrue(cfg.database.embeddedDurable, "embedded.yml, as ./flashsale server reads it");
    try (EmbeddedStack stack = EmbeddedStack.start(cfg, TemporalEngine.EMBEDDED)) {
      assertEquals("on", show(stack, "fsync"));
      assertEquals("on", show(stack, "full_page_writes"));
      assertEquals("on", show(stack, "synchronous_commit"));
      assertTrue(stack.postgres().durable());
    }
  }

  @Test
  void aScratchStackTurnsFsyncOffAndSaysSo() throws Exception {
    FlashsaleConfiguration cfg = bundled(dir.resolve("scratch"));
    cfg.database.embeddedDurable = false;
    Logger logger = (Logger) LoggerFactory.getLogger(SupervisedPostgres.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    try (EmbeddedStack stack = EmbeddedStack.start(cfg, TemporalEngine.EMBEDDED)) {
      assertEquals("off", show(stack, "fsync"));
      assertEquals("off", show(stack, "full_page_writes"));
      assertEquals("on", show(stack, "synchronous_commit"), "a crash of PostgreSQL alone still loses nothing");
      assertFalse(stack.postgres().durable());
    } finally {
      logger.detachAppender(lines);
    }
    assertTrue(lines.list.stream().anyMatch(e -> e.getFormattedMessage().equals(SupervisedPostgres.SCRATCH_NOTICE)),
        "the scratch stack says what it gives up: " + lines.list);
  }

  /** embedded.yml as the server command reads it, on free ports and a folder of its own. */
  static FlashsaleConfiguration bundled(Path data) throws Exception {
    FlashsaleApplication app = new FlashsaleApplication();
    Bootstrap<FlashsaleConfiguration> bootstrap = new Bootstrap<>(app);
    app.initialize(bootstrap);
    FlashsaleConfiguration cfg = new YamlConfigurationFactory<>(FlashsaleConfiguration.class,
        Validators.newValidator(), Jackson.newObjectMapper(), "dw")
        .build(bootstrap.getConfigurationSourceProvider(), "embedded.yml");
    cfg.dataDir = data.toString();
    // held in the shared reservations, below the ephemeral range (LocalPorts)
    cfg.temporal.embeddedPort = LocalPorts.shared().reserve();
    // 0: the stub binds whatever port is free at its start, so no JDBC connection opened while
    // PostgreSQL starts (an ephemeral source port) can take the port chosen for it beforehand.
    cfg.channel.embeddedPort = 0;
    // what the service fills in before it starts the stack: the stub's merchant key and notify URL
    cfg.channel.merchantKey = "durability-test-merchant-key";
    cfg.channel.notifyUrl = "http://127.0.0.1:1/callbacks/payment";
    return cfg;
  }

  static String show(EmbeddedStack stack, String setting) throws SQLException {
    try (Connection c = DriverManager.getConnection(stack.jdbcUrl()); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
