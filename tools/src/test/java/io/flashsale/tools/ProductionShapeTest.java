package io.flashsale.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProductionShapeTest {
  private static final String MAIN = io.flashsale.launcher.FlashsaleApplication.class.getName();

  @Test
  void theTwinIsTheSameBenchOnTheDevServerWithItsOwnReportFolder() {
    List<String> jvm = List.of("-Xmx2g", "-Ddw.temporal.engine=external", "-Dflashsale.home=/p", "-cp", "a.jar", MAIN,
        "bench", "--runs", "1", "--cluster", "--out", "evidence/bench", "--scenarios", "b1,b2", "embedded.yml");
    assertEquals(List.of("java", "-Xmx2g", "-Dflashsale.home=/p", "-cp", "a.jar", "-Ddw.temporal.engine=dev-server", MAIN,
            "bench", "--runs", "1", "--scenarios", "b1,b2", "embedded.yml", "--out", "/tmp/twin"),
        ProductionShape.twinArguments(List.of("java"), jvm, Path.of("/tmp/twin")));
  }

  @Test
  void theOutFolderWrittenWithAnEqualsSignGoesToo() {
    List<String> twin = ProductionShape.twinArguments(List.of("java"),
        List.of(MAIN, "bench", "--out=elsewhere", "--cluster"), Path.of("/t"));
    assertEquals(List.of("java", "-Ddw.temporal.engine=dev-server", MAIN, "bench", "--out", "/t"), twin);
  }

  @Test
  void anAbbreviatedClusterOptionIsDroppedToo() {
    List<String> twin = ProductionShape.twinArguments(List.of("java"), List.of(MAIN, "bench", "--clus", "--runs", "1"),
        Path.of("/t"));
    assertEquals(List.of("java", "-Ddw.temporal.engine=dev-server", MAIN, "bench", "--runs", "1", "--out", "/t"), twin);
  }

  @Test
  void anAbbreviatedOutFolderGoesToo() {
    List<String> twin = ProductionShape.twinArguments(List.of("java"),
        List.of(MAIN, "bench", "--ou", "x", "--open-loop-seconds", "0", "--ou=y"), Path.of("/t"));
    assertEquals(List.of("java", "-Ddw.temporal.engine=dev-server", MAIN, "bench", "--open-loop-seconds", "0",
        "--out", "/t"), twin);
  }

  @Test
  void anotherCommandIsRefused() {
    assertThrows(IllegalStateException.class,
        () -> ProductionShape.twinArguments(List.of("java"), List.of(MAIN, "server", "--cluster"), Path.of("/t")));
  }
}
