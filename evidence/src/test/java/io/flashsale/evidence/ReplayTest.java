package io.flashsale.evidence;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.flashsale.workflows.OrderWorkflowImpl;
import io.temporal.testing.WorkflowReplayer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Recorded histories from real runs (src/test/resources/histories) must replay against the
 * current workflow code: a change that alters history without Workflow.getVersion fails here.
 */
@org.junit.jupiter.api.Tag("in-memory-only") // engine-free: it runs once, in the fast run
class ReplayTest {
  @Test
  void recordedHistoriesReplay() throws Exception {
    List<Path> histories = histories();
    assertFalse(histories.isEmpty(), "no recorded histories found");
    for (Path p : histories) {
      System.out.println("replaying " + p.getFileName());
      WorkflowReplayer.replayWorkflowExecution(Files.readString(p), OrderWorkflowImpl.class);
    }
  }

  /** The guard itself: a workflow that schedules something else first must not replay. */
  @Test
  void aChangedWorkflowDoesNotReplay() throws Exception {
    Path paid = histories().stream().filter(p -> p.getFileName().toString().equals("c2901-paid.json")).findFirst()
        .orElseThrow();
    Exception e = org.junit.jupiter.api.Assertions.assertThrows(Exception.class,
        () -> WorkflowReplayer.replayWorkflowExecution(Files.readString(paid), ChangedOrderWorkflow.class));
    String all = e.toString() + (e.getCause() == null ? "" : " " + e.getCause());
    System.out.println("changed workflow: " + all);
    org.junit.jupiter.api.Assertions.assertTrue(all.toLowerCase().contains("nondetermin"), all);
  }

  /** OrderWorkflowImpl with one unversioned change: a timer before anything else. */
  public static class ChangedOrderWorkflow extends OrderWorkflowImpl {
    @Override
    public void run(io.flashsale.workflows.OrderStart start) {
      io.temporal.workflow.Workflow.sleep(java.time.Duration.ofSeconds(1));
      super.run(start);
    }
  }

  private static List<Path> histories() throws IOException, java.net.URISyntaxException {
    Path dir = Path.of(ReplayTest.class.getResource("/histories").toURI());
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
  }
}
