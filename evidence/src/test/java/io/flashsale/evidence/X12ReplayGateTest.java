package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.devstack.replay.ReplayCommand;
import io.flashsale.devstack.replay.ReplayGate;
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
 * naming exactly the workflows whose history went through pay, by the gate and by the command in
 * both modes (engine and --dir, exit 1). The engine's runs come oldest first; more than --limit
 * fails the gate (exit 3) with the count instead of replaying some.
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
    // on a loaded machine the charge's reply can miss its timeout: the pay answers UNKNOWN and the
    // order converges (notice, query); either way its history went through pay
    ev.note("pay answered " + Buyers.pay(buyer, paid).text("status"));
    stack.awaitStatus(paid, "PAID", 60_000);
    ev.equal("PAID", status(paid), "one order PAID");
    String declined = Buyers.create(buyer, "x12-declined", "sku-x12", 1).text("order_id");
    Buyers.fault(stack.channel, declined, Map.of("decline", true));
    ev.note("declined pay answered " + Buyers.pay(buyer, declined).text("status"));
    stack.awaitStatus(declined, "FAILED", 60_000);
    ev.equal("FAILED", status(declined), "one order FAILED (declined)");
    String cancelled = Buyers.create(buyer, "x12-cancelled", "sku-x12", 1).text("order_id");
    ev.equal(200, Buyers.cancel(buyer, cancelled).status(), "one order CANCELLED");
    List<String> payWorkflows = List.of(workflowId(paid), workflowId(declined));
    stack.awaitNoticesApplied(2, 15_000);

    String query = "WorkflowType = 'OrderWorkflow'";
    String target = "127.0.0.1:" + stack.temporalPort;
    var service = stack.wiring.temporal().service();
    stack.awaitTrue(() -> ReplayGate.fromEngine(service, "default", query, 50)
        .histories().size() == 3, 15_000, "visibility lists the three order workflows");
    noteVisibilityOrdering(query);
    List<String> startOrder = List.of(workflowId(paid), workflowId(declined), workflowId(cancelled));
    ev.equal(startOrder, ReplayGate.fromEngine(service, "default", query, 50).histories().stream()
        .map(ReplayGate.NamedHistory::name).toList(), "the engine's runs come oldest first");
    ReplayGate.Report current = new ReplayGate().replayEngine(service, "default", query, 50);
    current.outcomes().forEach(o -> ev.note(o.line()));
    ev.note(current.summary());
    ev.check(current.passed() && current.outcomes().size() == 3, "every recorded history replays against the current code");

    ReplayGate.Report changed = new ReplayGate(ChangedWorkflow.class).replayEngine(service, "default", query, 50);
    changed.failures().forEach(o -> ev.note(o.line().length() > 200 ? o.line().substring(0, 200) + "…" : o.line()));
    ev.equal(payWorkflows.stream().sorted().toList(), changed.failedNames().stream().sorted().toList(),
        "the changed workflow is caught: exactly the histories that went through pay fail");

    // the limit: three runs match, two allowed: nothing replayed, the count named
    try {
      ReplayGate.fromEngine(service, "default", query, 2);
      ev.check(false, "a limit below the count fails the gate");
    } catch (ReplayGate.TooManyRuns e) {
      ev.note(e.getMessage());
      ev.equal(3L, e.matched(), "a limit below the count fails the gate, naming the engine's count");
    }

    // the command itself (its body; the process below adds parsing and the exit), engine mode
    Command currentCmd = command(new ReplayGate(), null, target, query, 50);
    ev.equal(0, currentCmd.code(), "replay --target on the current code exits 0");
    Command changedCmd = command(new ReplayGate(ChangedWorkflow.class), null, target, query, 50);
    ev.note("replay --target on the changed workflow: exit " + changedCmd.code() + ", " + changedCmd.err().strip());
    ev.equal(1, changedCmd.code(), "replay --target on the changed workflow exits 1");
    ev.equal("replay: 2 failed: " + String.join(" ", payWorkflows), changedCmd.err().strip(),
        "… naming exactly the two workflows that went through pay, oldest first");
    Command tooMany = command(new ReplayGate(), null, target, query, 2);
    ev.equal(3, tooMany.code(), "replay --target --limit 2 with three runs exits 3");
    ev.check(tooMany.err().contains("3 runs match") && tooMany.err().contains("--limit 3"),
        "… naming the count and the --limit that covers it: " + tooMany.err().strip());

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
    Command changedDir = command(new ReplayGate(ChangedWorkflow.class), exported.toString(), target, query, 50);
    ev.equal(1, changedDir.code(), "replay --dir on the changed workflow exits 1");
    ev.equal("replay: 2 failed: " + String.join(" ", java.util.stream.Stream.of(paid, declined).map(o -> o + ".json")
        .sorted().toList()), changedDir.err().strip(),
        "… naming exactly the two exported files with a pay step");

    try (ChildJvm cmd = ChildJvm.start("x12-replay", Map.of(), "replay", "--target", target)) {
      int exit = cmd.awaitExit(120_000);
      String out = cmd.log();
      ev.note("./flashsale replay --target … → exit " + exit + ", " + out.lines()
          .filter(l -> l.startsWith("replayed=")).findFirst().orElse("(no summary)"));
      ev.equal(0, exit, "./flashsale replay exits 0 on the current code");
    }
    try (ChildJvm cmd = ChildJvm.start("x12-replay-limit", Map.of(), "replay", "--target", target, "--limit", "2")) {
      ev.equal(3, cmd.awaitExit(120_000), "./flashsale replay --limit 2 exits 3 with three runs");
      ev.check(cmd.log().contains("rerun with --limit 3"), "… and says how to raise --limit");
    }
    Files.writeString(exported.resolve("not-a-history.json"), "{\"events\": 7}");
    try (ChildJvm cmd = ChildJvm.start("x12-replay-bad", Map.of(), "replay", "--dir", exported.toString())) {
      int exit = cmd.awaitExit(120_000);
      ev.equal(1, exit, "./flashsale replay exits 1 when a history does not replay, naming it");
      ev.check(cmd.log().contains("not-a-history.json"), "the failing file is named");
    }
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  /**
   * Whether the dev server's visibility sorts by a query's ORDER BY: printed, not asserted (the
   * gate sorts the listed runs itself, so it works either way).
   */
  private static void noteVisibilityOrdering(String query) {
    try {
      stack.wiring.temporal().service().blockingStub().listWorkflowExecutions(
          io.temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest.newBuilder().setNamespace("default")
              .setQuery(query + " ORDER BY StartTime ASC").setPageSize(10).build());
      ev.note("dev server visibility: ORDER BY StartTime ASC accepted");
    } catch (io.grpc.StatusRuntimeException e) {
      ev.note("dev server visibility: ORDER BY rejected (" + e.getStatus().getCode() + ": "
          + e.getStatus().getDescription() + "); the gate sorts by start time itself");
    }
  }

  record Command(int code, String out, String err) {}

  /** ReplayCommand's body, everything but System.exit, with its output captured. */
  private static Command command(ReplayGate gate, String dir, String target, String query, int limit) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
    int code = ReplayCommand.execute(gate, dir, target, "default", query, limit,
        new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8),
        new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
    return new Command(code, out.toString(java.nio.charset.StandardCharsets.UTF_8),
        err.toString(java.nio.charset.StandardCharsets.UTF_8));
  }

  private static String status(String orderId) {
    return stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId);
  }

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }
}
