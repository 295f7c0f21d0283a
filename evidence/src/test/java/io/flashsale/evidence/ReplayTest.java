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

  private static List<Path> histories() throws IOException, java.net.URISyntaxException {
    Path dir = Path.of(ReplayTest.class.getResource("/histories").toURI());
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
  }
}
