package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.launcher.replay.ReplayGate;
import io.flashsale.workflows.CommandResult;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.temporal.workflow.Workflow;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the replay gate a team runs before deploying a workflow change. Histories recorded on the
 * dev server (taken from its visibility, and exported with the real {@code temporal workflow show
 * --output json}) all replay against the current workflow code, through {@code ./flashsale
 * replay} in its own process too; a changed workflow (one unversioned timer in pay) is caught,
 * naming exactly the workflows whose history went through pay.
 */
@Tag("dev-server-only")
class X12ReplayGateTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("X-12", "replay gate over dev-server histories, changed workflow caught");

  /** The negative control: what a careless change to pay looks like (a new timer, no getVersion). */
  public static class ChangedWorkflow extends OrderWorkflowImpl {
    @io.temporal.workflow.WorkflowInit
    public ChangedWorkflow(io.flashsale.workflows.OrderStart start) {
      super(start);
    }

    @Override
    public CommandResult pay() {
      Workflow.sleep(Duration.ofMillis(10));
      return super.pay();
    }
  }

  @Test
  void replayGate() throws Exception {
    stack.sku("sku-x12", 10, 5);
    HttpJson buyer = stack.api.login("t1", "user-1201");
    String paid = Buyers.create(buyer, "x12-paid", "sku-x12", 1).text("order_id");
    ev.equal("PAID", Buyers.pay(buyer, paid).text("status"), "one order PAID");
    String declined = Buyers.create(buyer, "x12-declined", "sku-x12", 1).text("order_id");
    Buyers.fault(stack.channel, declined, Map.of("decline", true));
    ev.equal("FAILED", Buyers.pay(buyer, declined).text("status"), "one order FAILED (declined)");
    String cancelled = Buyers.create(buyer, "x12-cancelled", "sku-x12", 1).text("order_id");
    ev.equal(200, Buyers.cancel(buyer, cancelled).status(), "one order CANCELLED");
    List<String> payWorkflows = List.of(workflowId(paid), workflowId(declined));
    stack.awaitNoticesApplied(2, 15_000);

    String query = "WorkflowType = 'OrderWorkflow'";
    stack.awaitTrue(() -> ReplayGate.fromEngine(stack.wiring.temporal().service(), "default", query, 50)
        .histories().size() == 3, 15_000, "visibility lists the three order workflows");
    ReplayGate.Report current = new ReplayGate().replayEngine(stack.wiring.temporal().service(), "default", query, 50);
    current.outcomes().forEach(o -> ev.note(o.line()));
    ev.note(current.summary());
    ev.check(current.passed() && current.outcomes().size() == 3, "every recorded history replays against the current code");

    ReplayGate.Report changed = new ReplayGate(ChangedWorkflow.class)
        .replayEngine(stack.wiring.temporal().service(), "default", query, 50);
    changed.failures().forEach(o -> ev.note(o.line().length() > 200 ? o.line().substring(0, 200) + "…" : o.line()));
    ev.equal(payWorkflows.stream().sorted().toList(), changed.failedNames().stream().sorted().toList(),
        "the changed workflow is caught: exactly the histories that went through pay fail");

    Path exported = stack.dataDir().resolve("exported-histories");
    Files.createDirectories(exported);
    for (String orderId : List.of(paid, declined, cancelled)) {
      TemporalCliProcess.Result show = TemporalCliProcess.run(stack, "workflow", "show", "--workflow-id",
          workflowId(orderId), "--output", "json");
      ev.equal(0, show.exit(), "temporal workflow show --output json " + orderId);
      Files.writeString(exported.resolve(orderId + ".json"), show.output());
    }
    ReplayGate.Report folder = new ReplayGate().replayDirectory(exported);
    ev.note("exported folder: " + folder.summary());
    ev.check(folder.passed() && folder.outcomes().size() == 3, "the CLI's exported JSON histories replay");
    ev.equal(2, new ReplayGate(ChangedWorkflow.class).replayDirectory(exported).failures().size(),
        "the changed workflow fails the two exported histories with a pay step");

    try (ChildJvm cmd = ChildJvm.start("x12-replay", Map.of(), "replay", "--target", "127.0.0.1:" + stack.temporalPort)) {
      int exit = cmd.awaitExit(120_000);
      String out = cmd.log();
      ev.note("./flashsale replay --target … → exit " + exit + ", " + out.lines()
          .filter(l -> l.startsWith("replayed=")).findFirst().orElse("(no summary)"));
      ev.equal(0, exit, "./flashsale replay exits 0 on the current code");
    }
    Files.writeString(exported.resolve("not-a-history.json"), "{\"events\": 7}");
    try (ChildJvm cmd = ChildJvm.start("x12-replay-bad", Map.of(), "replay", "--dir", exported.toString())) {
      int exit = cmd.awaitExit(120_000);
      ev.equal(1, exit, "./flashsale replay exits 1 when a history does not replay, naming it");
      ev.check(cmd.log().contains("not-a-history.json"), "the failing file is named");
    }
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }
}
