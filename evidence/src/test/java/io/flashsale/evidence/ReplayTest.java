package io.flashsale.evidence;


import io.flashsale.workflows.OrderWorkflowImpl;
import io.temporal.testing.WorkflowReplayer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * recorded histories from real runs (src/test/resources/histories) must replay against the
 * current workflow code: a change that alters history without Workflow.getVersion fails here.
 * Each history is one check, so a failing one is named in the evidence and counted.
 */
@org.junit.jupiter.api.Tag("in-memory-only") // engine-free: it runs once, in the fast run
class ReplayTest {
  @RegisterExtension static final Evidence ev = new Evidence("X-23",
      "recorded histories replay against the current workflow code");

  @Test
  void recordedHistoriesReplay() throws Exception {
    List<Path> histories = histories();
    ev.check(!histories.isEmpty(), "recorded histories found: " + histories.size());
    // every history is tried and recorded; the first failure fails the test at the end
    List<AssertionError> failures = new ArrayList<>();
    for (Path p : histories) {
      String error = null;
      try {
        WorkflowReplayer.replayWorkflowExecution(Files.readString(p), OrderWorkflowImpl.class);
      } catch (Exception e) {
        error = brief(e);
        ev.note(p.getFileName() + " does not replay: " + error);
      }
      try {
        ev.check(error == null, p.getFileName() + " replays");
      } catch (AssertionError e) {
        failures.add(e);
      }
    }
    if (!failures.isEmpty()) throw failures.get(0);
  }

  /** The guard itself: a workflow that schedules something else first must not replay. */
  @Test
  void aChangedWorkflowDoesNotReplay() throws Exception {
    Path paid = histories().stream().filter(p -> p.getFileName().toString().equals("c2901-paid.json")).findFirst()
        .orElseThrow();
    String all = "replayed without error";
    try {
      WorkflowReplayer.replayWorkflowExecution(Files.readString(paid), ChangedOrderWorkflow.class);
    } catch (Exception e) {
      all = e.toString() + (e.getCause() == null ? "" : " " + e.getCause());
      ev.note("changed workflow on c2901-paid.json: " + brief(e));
    }
    ev.check(all.toLowerCase().contains("nondetermin"),
        "a workflow changed without Workflow.getVersion does not replay c2901-paid.json (nondeterminism)");
  }

  /** OrderWorkflowImpl with one unversioned change: a timer before anything else. */
  public static class ChangedOrderWorkflow extends OrderWorkflowImpl {
    @io.temporal.workflow.WorkflowInit
    public ChangedOrderWorkflow(io.flashsale.workflows.OrderStart start) {
      super(start);
    }

    @Override
    public void run(io.flashsale.workflows.OrderStart start) {
      io.temporal.workflow.Workflow.sleep(java.time.Duration.ofSeconds(1));
      super.run(start);
    }
  }

  /** One line for the evidence: the nondeterminism itself when there is one, no stack trace. */
  private static String brief(Exception e) {
    String s = e.toString() + (e.getCause() == null ? "" : " caused by " + e.getCause());
    int nd = s.indexOf("NonDeterministicException");
    if (nd >= 0) s = s.substring(nd);
    int at = s.indexOf("\tat ");
    if (at >= 0) s = s.substring(0, at);
    s = s.replaceAll("\\s+", " ").strip();
    return s.length() > 300 ? s.substring(0, 300) + " ..." : s;
  }

  private static List<Path> histories() throws IOException, java.net.URISyntaxException {
    Path dir = Path.of(ReplayTest.class.getResource("/histories").toURI());
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
  }
}
