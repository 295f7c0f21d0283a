package io.flashsale.devstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.launcher.FlashsaleConfiguration;
import io.flashsale.launcher.TemporalEngine;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EngineChoiceTest {
  @TempDir Path dir;

  @Test
  void engineNamesParseAsTheyAreWritten() {
    assertEquals(TemporalEngine.DEV_SERVER, TemporalEngine.parse("dev-server"));
    assertEquals(TemporalEngine.EXTERNAL, TemporalEngine.parse(" External "));
    assertEquals("dev-server", TemporalEngine.DEV_SERVER.configName());
    assertThrows(IllegalArgumentException.class, () -> TemporalEngine.parse("docker"));
  }

  @Test
  void autoPicksTheDevServerWhenTheCliIsThereElseTheInMemoryEngine() throws IOException {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    cfg.embedded = true;
    Path cli = Files.createFile(dir.resolve("temporal"), PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rwxr-xr-x")));
    cfg.temporal.cliPath = cli.toString();
    assertEquals(TemporalEngine.DEV_SERVER, EmbeddedStack.resolve(cfg));
    cfg.temporal.cliPath = dir.resolve("missing").toString();
    assertEquals(TemporalEngine.EMBEDDED, EmbeddedStack.resolve(cfg));
  }

  @Test
  void autoMeansExternalOutsideTheLocalDefaultAndAnExplicitChoiceStands() {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    cfg.embedded = false;
    assertEquals(TemporalEngine.EXTERNAL, EmbeddedStack.resolve(cfg));
    cfg.temporal.engine = TemporalEngine.EMBEDDED;
    assertEquals(TemporalEngine.EMBEDDED, EmbeddedStack.resolve(cfg));
  }

  @Test
  void aPortHeldBySomethingElseIsAClearStartupError() throws IOException {
    Path cli = Files.createFile(dir.resolve("temporal"), PosixFilePermissions.asFileAttribute(
        PosixFilePermissions.fromString("rwxr-xr-x")));
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      IOException e = assertThrows(IOException.class, () -> DevServer.start(new DevServer.Options(cli, "default",
          held.getLocalPort(), 0, null, dir, List.of())));
      assertTrue(e.getMessage().contains("port " + held.getLocalPort() + " on 127.0.0.1 is held by another process"),
          e.getMessage());
    }
  }

  @Test
  void aLeftoverPidFileOfADeadProcessIsIgnored() throws IOException {
    Files.writeString(dir.resolve("postmaster.pid"), "999999999\n" + dir + "\n");
    EmbeddedStack.stopLeftoverPostmaster(dir); // nothing to stop, nothing thrown
    assertTrue(Files.exists(dir.resolve("postmaster.pid")), "PostgreSQL itself handles a stale pid file");
  }
}
