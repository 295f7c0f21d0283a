package io.flashsale.evidence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The harness's record of an experiment (Evidence): a failure after the tests — the stack not
 * stopping, a safeguard not restored — turns its RESULT into FAIL whichever field comes first; a
 * skip by an assumption is a FAIL, a @Disabled test is listed with its reason. The sample
 * experiments below run through the JUnit Platform, as surefire runs the real ones; {@code @Order}
 * fixes which afterAll runs first (without it JUnit orders the fields by a hash of their names).
 */
@Tag("in-memory-only") // engine-free: it runs once, in the fast run
class EvidenceRecordTest {
  // ids through constants: summary.sh counts only literal ids as experiments of the real run
  static final String TEARDOWN_AFTER = "T-91";
  static final String TEARDOWN_BEFORE = "T-92";
  static final String RESTORE = "T-93";
  static final String CLEAN = "T-94";
  static final String SKIPS = "T-95";
  static final String DISABLED_ONLY = "T-96";
  static final String START_FAILS = "T-97";

  @TempDir static Path results;

  @Test
  void aStackThatDoesNotStopFailsTheResultWrittenAfterIt() throws IOException {
    // the real experiments' order: the stack's field first, so its afterAll runs after Evidence's
    String record = run(StackFailsToStop.class, TEARDOWN_AFTER);
    assertTrue(record.contains("ok   the test's own invariant"), record);
    assertTrue(record.contains("FAIL StackFailsToStop outside its tests (setup or teardown): java.lang.IllegalStateException:"
        + " the stack did not stop"), record);
    assertTrue(record.contains("RESULT " + TEARDOWN_AFTER + " FAIL ["), record);
    assertTrue(record.contains("ASSERTIONS passed=1 failed=1"), record);
  }

  @Test
  void aTeardownFailureCountsWhicheverFieldComesFirst() throws IOException {
    String record = run(TeardownFailsBeforeEvidence.class, TEARDOWN_BEFORE);
    assertTrue(record.contains("RESULT " + TEARDOWN_BEFORE + " FAIL ["), record);
  }

  @Test
  void aSafeguardNotRestoredFailsTheResult() throws IOException {
    String record = run(SafeguardNotRestored.class, RESTORE);
    assertTrue(record.contains("safeguards not restored: still off [CONFIRM_MUST_TAKE_EFFECT]"), record);
    assertTrue(record.contains("RESULT " + RESTORE + " FAIL ["), record);
  }

  @Test
  void aCleanTeardownPassesAndTheRecordNamesItsRun() throws IOException {
    String record = run(CleanTeardown.class, CLEAN);
    assertTrue(record.contains("RESULT " + CLEAN + " PASS ["), record);
    assertTrue(record.lines().anyMatch(l -> l.matches("RUN \\S+ commit=\\S+ tree=(clean|modified)")), record);
  }

  @Test
  void anAssumptionSkipFailsAndADisabledTestIsListed() throws IOException {
    String record = run(SkipsAndDisabled.class, SKIPS);
    assertTrue(record.contains("DISABLED laterFeature(): waits for the channel's v2 API"), record);
    assertTrue(record.contains("FAIL needsChromium() skipped by an assumption (Assumption failed: no chromium on PATH)"),
        record);
    assertTrue(record.contains("RESULT " + SKIPS + " FAIL ["), record);
    assertTrue(record.contains("ASSERTIONS passed=1 failed=1"), "the skip counted once: " + record);
  }

  @Test
  void onlyDisabledTestsGiveADisabledResult() throws IOException {
    String record = run(OnlyDisabled.class, DISABLED_ONLY);
    assertTrue(record.contains("RESULT " + DISABLED_ONLY + " DISABLED ["), record);
    assertFalse(record.contains("FAIL"), record);
  }

  @Test
  void aStackThatDoesNotStartFailsTheResult() throws IOException {
    String record = run(StackFailsToStart.class, START_FAILS);
    assertTrue(record.contains("RESULT " + START_FAILS + " FAIL ["), record);
  }

  @Test
  void theStackCheckFailsWhileAPortStillAnswers() throws IOException {
    try (ServerSocket leftover = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> Stack.awaitStopped(Map.of("PostgreSQL", leftover.getLocalPort()), 300));
      assertTrue(e.getMessage().contains("PostgreSQL=" + leftover.getLocalPort()), e.getMessage());
    }
    int closed;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      closed = s.getLocalPort();
    }
    Stack.awaitStopped(Map.of("PostgreSQL", closed), 300); // closed: returns
  }

  private static String run(Class<?> experiment, String id) throws IOException {
    LauncherFactory.create().execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(experiment))
        .build());
    Path file = results.resolve(id + "@" + Stack.ENGINE + ".txt");
    assertTrue(Files.exists(file), "no record written for " + experiment.getSimpleName());
    return Files.readString(file);
  }

  // ---- sample experiments (nested: surefire does not run them by themselves)

  /** Stands in for a {@link Stack} whose stop fails. */
  static AfterAllCallback failingStop() {
    return context -> {
      throw new IllegalStateException("the stack did not stop: still listening after 30000 ms: {PostgreSQL=5432}");
    };
  }

  /** Evidence registered last, so its afterAll runs first: the stack stops after it. */
  static class StackFailsToStop {
    @Order(1) @RegisterExtension static final AfterAllCallback stack = failingStop();
    @Order(2) @RegisterExtension static final Evidence ev = new Evidence(TEARDOWN_AFTER, "teardown fails").writingTo(results);

    @Test
    void holds() {
      ev.check(true, "the test's own invariant");
    }
  }

  static class StackFailsToStart {
    @Order(1) @RegisterExtension static final org.junit.jupiter.api.extension.BeforeAllCallback stack = context -> {
      throw new IllegalStateException("PostgreSQL did not start");
    };
    @Order(2) @RegisterExtension static final Evidence ev = new Evidence(START_FAILS, "start fails").writingTo(results);

    @Test
    void holds() {
      ev.check(true, "the test's own invariant");
    }
  }

  /** Evidence registered first, so its afterAll runs last. */
  static class TeardownFailsBeforeEvidence {
    @Order(1) @RegisterExtension static final Evidence ev = new Evidence(TEARDOWN_BEFORE, "teardown fails")
        .writingTo(results);
    @Order(2) @RegisterExtension static final AfterAllCallback stack = failingStop();

    @Test
    void holds() {
      ev.check(true, "the test's own invariant");
    }
  }

  static class SafeguardNotRestored {
    // a negative control's restore that fails (as NegativeControl's or the consumer's idempotency switch could)
    @Order(1) @RegisterExtension static final AfterAllCallback restore = context -> {
      throw new IllegalStateException("safeguards not restored: still off [CONFIRM_MUST_TAKE_EFFECT]");
    };
    @Order(2) @RegisterExtension static final Evidence ev = new Evidence(RESTORE, "restore fails").writingTo(results);

    @Test
    void holds() {
      ev.check(true, "the test's own invariant");
    }
  }

  static class CleanTeardown {
    @RegisterExtension static final AfterAllCallback stack = context -> {};
    @RegisterExtension static final Evidence ev = new Evidence(CLEAN, "clean").writingTo(results);

    @Test
    void holds() {
      ev.check(true, "the test's own invariant");
    }
  }

  static class SkipsAndDisabled {
    @RegisterExtension static final Evidence ev = new Evidence(SKIPS, "skips").writingTo(results);

    @Test
    void holds() {
      ev.check(true, "the test's own invariant");
    }

    @Test
    void needsChromium() {
      Assumptions.assumeTrue(false, "no chromium on PATH");
    }

    @Test
    @Disabled("waits for the channel's v2 API")
    void laterFeature() {}
  }

  static class OnlyDisabled {
    @RegisterExtension static final Evidence ev = new Evidence(DISABLED_ONLY, "disabled").writingTo(results);

    @Test
    @Disabled("waits for the channel's v2 API")
    void laterFeature() {}
  }
}
