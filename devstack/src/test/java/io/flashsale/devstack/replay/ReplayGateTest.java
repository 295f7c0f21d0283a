package io.flashsale.devstack.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Step;
import io.flashsale.devstack.replay.ReplayCommand;
import io.flashsale.paymentchannel.ChannelResult;
import io.flashsale.workflows.ChannelActivities;
import io.flashsale.workflows.OrderActivities;
import io.flashsale.workflows.OrderSettings;
import io.flashsale.workflows.OrderStart;
import io.flashsale.workflows.OrderWorkflow;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.flashsale.workflows.WorkflowIds;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReplayGateTest {
  /** The recorded histories, read in place (the api module's tests run in api/). */
  static final Path HISTORIES = Path.of("../evidence/src/test/resources/histories");

  static List<String> files;

  @BeforeAll
  static void recorded() throws IOException {
    assertTrue(Files.isDirectory(HISTORIES), HISTORIES.toAbsolutePath() + " missing");
    try (Stream<Path> s = Files.list(HISTORIES)) {
      files = s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json")).sorted().toList();
    }
    assertFalse(files.isEmpty(), "no recorded histories");
  }

  // ------------------------------------------------------------ the gate on recorded histories

  @Test
  void recordedHistoriesReplayOnTheCurrentWorkflow() throws Exception {
    ReplayGate.Report report = new ReplayGate().replayDirectory(HISTORIES);
    report.outcomes().forEach(o -> System.out.println(o.line()));
    assertEquals(files.size(), report.historiesRead());
    assertEquals(files, report.outcomes().stream().map(ReplayGate.Outcome::name).toList());
    assertEquals(List.of(), report.failures(), "recorded histories must replay on OrderWorkflowImpl");
    assertTrue(report.passed());
    assertEquals("replayed=" + files.size() + " failed=0", report.summary());
  }

  /** The negative control: the changed pay step is caught in exactly the histories that paid. */
  @Test
  void aChangedWorkflowFailsEveryHistoryThatRunsTheChangedStep() throws Exception {
    ReplayGate.Loaded loaded = ReplayGate.fromDirectory(HISTORIES);
    assertEquals(List.of(), loaded.unreadable());
    Set<String> paying = new TreeSet<>();
    for (ReplayGate.NamedHistory h : loaded.histories()) {
      if (updateNames(h.history()).contains("pay")) paying.add(h.name());
    }
    assertFalse(paying.isEmpty(), "no recorded history runs the pay step");

    ReplayGate.Report report = new ReplayGate(ChangedOrderWorkflow.class).replay(loaded);
    report.outcomes().forEach(o -> System.out.println(o.line()));
    assertEquals(paying.size(), report.failures().size(), report.failures().toString());
    assertEquals(paying, new TreeSet<>(report.failedNames()));
    for (ReplayGate.Outcome f : report.failures()) {
      assertTrue(f.reason().startsWith("NonDeterministicException: "), f.line());
      assertFalse(f.reason().contains("\n"), "reason is one line: " + f.reason());
      assertTrue(f.line().startsWith("FAILED " + f.name() + ": "), f.line());
    }
    // the histories without a pay step still replay: the gate names the change, not everything
    assertEquals(files.size() - paying.size(), report.outcomes().stream().filter(ReplayGate.Outcome::isOk).count());
    assertFalse(report.passed());
  }

  /**
   * A replayed task slower than the worker's 1 s deadlock guard (a cold JVM on a loaded machine)
   * is not a failure of the history: the gate's replay worker allows it.
   */
  @Test
  void aSlowWorkflowTaskIsNotADeadlockInReplay() throws Exception {
    ReplayGate.Loaded one = ReplayGate.fromDirectory(HISTORIES);
    ReplayGate.NamedHistory paid = one.histories().stream().filter(h -> h.name().equals("c2901-paid.json"))
        .findFirst().orElseThrow();
    ReplayGate.Report report = new ReplayGate(SlowFirstTaskOrderWorkflow.class).replay(List.of(paid));
    assertEquals(List.of(ReplayGate.Outcome.ok("c2901-paid.json")), report.outcomes(), report.outcomes().toString());
  }

  @Test
  void aFileThatIsNotAHistoryIsAFailureNamingIt(@TempDir Path dir) throws Exception {
    Files.copy(HISTORIES.resolve(files.get(0)), dir.resolve(files.get(0)));
    Files.writeString(dir.resolve("broken.json"), "{ \"events\": [ {\"eventId\": ");
    Files.writeString(dir.resolve("empty.json"), "{}");
    Files.writeString(dir.resolve("notes.txt"), "not a history, and not *.json: skipped");

    ReplayGate.Report report = new ReplayGate().replayDirectory(dir);
    report.outcomes().forEach(o -> System.out.println(o.line()));
    assertEquals(1, report.historiesRead());
    assertEquals(3, report.outcomes().size());
    assertEquals(Set.of("broken.json", "empty.json"), Set.copyOf(report.failedNames()));
    for (ReplayGate.Outcome f : report.failures()) {
      assertTrue(f.reason().startsWith("not a workflow history: "), f.line());
    }
    assertEquals("not a workflow history: no \"events\" array",
        report.outcomes().stream().filter(o -> o.name().equals("empty.json")).findFirst().orElseThrow().reason());
    assertEquals(ReplayGate.Outcome.ok(files.get(0)),
        report.outcomes().stream().filter(o -> o.name().equals(files.get(0))).findFirst().orElseThrow());
  }

  @Test
  void reasonsAreOneLine() {
    Exception e = new RuntimeException("outer", new IllegalStateException("line one\n  line two\tend"));
    assertEquals("IllegalStateException: line one line two end", ReplayGate.reason(e));
    assertTrue(ReplayGate.reason(new RuntimeException("x".repeat(1000))).length() <= 400);
    // what Worker.replayWorkflowExecution throws: the nondeterminism quoted in a query failure
    Exception replay = new RuntimeException("query failure for workflow_id: \"w\"\nrun_id: \"r\"\n, queryType=__replay_only,"
        + " error=io.temporal.worker.NonDeterministicException: [TMPRL1100] Event 31 of type"
        + " EVENT_TYPE_ACTIVITY_TASK_SCHEDULED does not match command type COMMAND_TYPE_START_TIMER.\n"
        + "\tat io.temporal.internal.statemachines.WorkflowStateMachines.handleCommandEvent(X.java:632)\n");
    assertEquals("NonDeterministicException: [TMPRL1100] Event 31 of type EVENT_TYPE_ACTIVITY_TASK_SCHEDULED does not"
        + " match command type COMMAND_TYPE_START_TIMER.", ReplayGate.reason(replay));
    // any other failure of the replayed task: its innermost quoted cause, not the query wrapper
    Exception deadlock = new RuntimeException("query failure for workflow_id: \"w\"\n, queryType=__replay_only,"
        + " error=io.temporal.internal.statemachines.InternalWorkflowTaskException: Failure handling event 4 of type"
        + " 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED' during replay.\n\tat a.B.c(B.java:1)\n"
        + "Caused by: java.lang.RuntimeException: WorkflowTask: failure executing STARTED->WORKFLOW_TASK_COMPLETED\n"
        + "\tat a.B.d(B.java:2)\nCaused by: io.temporal.internal.sync.PotentialDeadlockException: [TMPRL1101]"
        + " Potential deadlock detected.\n\tat a.B.e(B.java:3)\n");
    assertEquals("PotentialDeadlockException: [TMPRL1101] Potential deadlock detected.", ReplayGate.reason(deadlock));
  }

  // ------------------------------------------------------------ the command's exit status

  @Test
  void commandExitsZeroWhenEverythingReplays() {
    Run r = command(new ReplayGate(), HISTORIES.toString());
    assertEquals(0, r.code, r.out + r.err);
    for (String f : files) assertTrue(r.out.contains("OK " + f + "\n"), r.out);
    assertTrue(r.out.endsWith("replayed=" + files.size() + " failed=0\n"), r.out);
  }

  @Test
  void commandExitsOneNamingEveryFailedWorkflow() throws Exception {
    Run r = command(new ReplayGate(ChangedOrderWorkflow.class), HISTORIES.toString());
    assertEquals(1, r.code, r.out + r.err);
    List<String> failed = new ArrayList<>();
    for (String line : r.out.split("\n")) {
      if (line.startsWith("FAILED ")) failed.add(line.substring(7, line.indexOf(':')));
    }
    assertFalse(failed.isEmpty());
    assertTrue(r.out.contains("failed=" + failed.size() + "\n"), r.out);
    for (String id : failed) assertTrue(r.err.contains(id), "stderr names " + id + ": " + r.err);
  }

  @Test
  void commandExitsTwoWhenNothingCouldBeRead(@TempDir Path dir) throws Exception {
    assertEquals(2, command(new ReplayGate(), dir.toString()).code, "empty folder");
    assertEquals(2, command(new ReplayGate(), dir.resolve("missing").toString()).code, "missing folder");
    Files.writeString(dir.resolve("broken.json"), "nope");
    Run onlyBroken = command(new ReplayGate(), dir.toString());
    assertEquals(2, onlyBroken.code);
    assertTrue(onlyBroken.out.contains("FAILED broken.json: not a workflow history"), onlyBroken.out);
    // no engine there: nothing read
    Run noEngine = command(new ReplayGate(), null, "127.0.0.1:1");
    assertEquals(2, noEngine.code, noEngine.err);
  }

  /** The real app, in its own JVM: registration, argument parsing and a real non-zero exit. */
  @Test
  void theAppProcessExitsNonZeroWhenAHistoryFails(@TempDir Path dir) throws Exception {
    Files.copy(HISTORIES.resolve(files.get(0)), dir.resolve(files.get(0)));
    Files.writeString(dir.resolve("broken.json"), "{ not json");
    Proc bad = app("replay", "--dir", dir.toString());
    assertEquals(1, bad.code, bad.output);
    assertTrue(bad.output.contains("OK " + files.get(0)), bad.output);
    assertTrue(bad.output.contains("FAILED broken.json: "), bad.output);
    assertTrue(bad.output.contains("replayed=2 failed=1"), bad.output);

    Proc good = app("replay", "--dir", HISTORIES.toString());
    assertEquals(0, good.code, good.output);
    assertTrue(good.output.contains("replayed=" + files.size() + " failed=0"), good.output);

    Proc none = app("replay", "--dir", dir.resolve("missing").toString());
    assertEquals(2, none.code, none.output);
  }

  // ------------------------------------------------------------ the engine as the source

  /**
   * Two orders run on the in-process test engine (fake activities): one paid, one sold out. The
   * gate lists them (the test engine has no visibility queries: the type-only fallback), oldest
   * first, fetches their histories and replays them; the changed workflow fails only the paid one.
   * A limit below the count fails loudly with the count instead of dropping a run.
   */
  @Test
  void historiesFromTheEngine() throws Exception {
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance(engineOptions().build())) {
      Orders orders = runOrders(env);

      ReplayGate.Loaded loaded = ReplayGate.fromEngine(env.getWorkflowServiceStubs(), env.getNamespace(), null, 50);
      assertEquals(List.of(), loaded.unreadable());
      // oldest first: the paid order was started before the sold-out one
      assertEquals(List.of(orders.paid, orders.soldOut),
          loaded.histories().stream().map(ReplayGate.NamedHistory::name).toList());

      ReplayGate.Report ok = new ReplayGate().replay(loaded);
      assertEquals(List.of(), ok.failures());
      assertEquals(2, ok.historiesRead());

      ReplayGate.Report changed = new ReplayGate(ChangedOrderWorkflow.class).replay(loaded);
      assertEquals(List.of(orders.paid), changed.failedNames(), changed.outcomes().toString());

      // exactly the limit: everything replayed; one below it: nothing, and the count said
      assertEquals(2, ReplayGate.fromEngine(env.getWorkflowServiceStubs(), env.getNamespace(),
          ReplayGate.DEFAULT_QUERY, 2).histories().size());
      ReplayGate.TooManyRuns tooMany = assertThrows(ReplayGate.TooManyRuns.class, () -> ReplayGate.fromEngine(
          env.getWorkflowServiceStubs(), env.getNamespace(), ReplayGate.DEFAULT_QUERY, 1));
      assertEquals(2, tooMany.matched());
      assertEquals(1, tooMany.limit());
      assertTrue(tooMany.getMessage().startsWith("2 runs match the query " + ReplayGate.DEFAULT_QUERY
          + ", more than the limit of 1; nothing was replayed: rerun with --limit 2"), tooMany.getMessage());

      assertEquals(0, ReplayGate.fromEngine(env.getWorkflowServiceStubs(), env.getNamespace(),
          "WorkflowType = 'SomethingElse'", 50).histories().size());
      assertThrows(IllegalStateException.class, () -> ReplayGate.fromEngine(env.getWorkflowServiceStubs(),
          env.getNamespace(), "WorkflowType = 'OrderWorkflow' AND ExecutionStatus = 'Running'", 50));
    }
  }

  /**
   * The command itself in engine mode, over gRPC to a port-bound test engine: the current code
   * exits 0; a changed workflow (an unversioned timer in pay) exits 1 naming exactly the paid
   * order's workflow; a limit below the count exits 3 naming the count and --limit; the app in
   * its own JVM parses --target/--limit and exits 3 too.
   */
  @Test
  void commandOnTheEngineExitsOneNamingTheWorkflowAChangeBreaks() throws Exception {
    int port = io.flashsale.devstack.LocalPorts.shared().reserve(); // held for this JVM: bound below
    String target = "127.0.0.1:" + port;
    try (var server = io.temporal.testserver.TestServer.createPortBoundServer(port);
        TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance(
            engineOptions().setUseExternalService(true).setTarget(target).build())) {
      Orders orders = runOrders(env);

      Run current = command(new ReplayGate(), null, target, 50);
      assertEquals(0, current.code, current.out + current.err);
      assertEquals("OK " + orders.paid + "\nOK " + orders.soldOut + "\nreplayed=2 failed=0\n", current.out);

      Run changed = command(new ReplayGate(ChangedOrderWorkflow.class), null, target, 50);
      assertEquals(1, changed.code, changed.out + changed.err);
      assertTrue(changed.out.startsWith("FAILED " + orders.paid + ": NonDeterministicException: "), changed.out);
      assertTrue(changed.out.contains("\nOK " + orders.soldOut + "\n"), changed.out);
      assertTrue(changed.out.endsWith("replayed=2 failed=1\n"), changed.out);
      assertEquals("replay: 1 failed: " + orders.paid + "\n", changed.err);

      Run tooMany = command(new ReplayGate(), null, target, 1);
      assertEquals(3, tooMany.code, tooMany.out + tooMany.err);
      assertEquals("", tooMany.out, "nothing replayed");
      assertTrue(tooMany.err.startsWith("replay: 2 runs match the query " + ReplayGate.DEFAULT_QUERY
          + ", more than the limit of 1; nothing was replayed: rerun with --limit 2"), tooMany.err);

      Proc app = app("replay", "--target", target, "--limit", "1");
      assertEquals(3, app.code, app.output);
      assertTrue(app.output.contains("rerun with --limit 2"), app.output);
    }
  }

  private static TestEnvironmentOptions.Builder engineOptions() {
    return TestEnvironmentOptions.newBuilder()
        .registerSearchAttribute("OrderId", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
        .registerSearchAttribute("OrderStatus", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
        .registerSearchAttribute("Sku", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
        .registerSearchAttribute("Tenant", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
  }

  record Orders(String paid, String soldOut) {}

  /** A paid order, then a sold-out one, each run to its end on the engine (fake activities). */
  private static Orders runOrders(TestWorkflowEnvironment env) throws Exception {
    Worker worker = env.newWorker(WorkflowIds.TASK_QUEUE);
    worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
    worker.registerActivitiesImplementations(fake(OrderActivities.class), fake(ChannelActivities.class));
    env.start();
    OrderSettings settings = new OrderSettings(600_000, 1_000, 60_000, 1_000, 4_000);
    String paid = order(env.getWorkflowClient(), settings, "k-paid", "sku-1", true);
    String soldOut = order(env.getWorkflowClient(), settings, "k-sold-out", SOLD_OUT_SKU, false);
    return new Orders(paid, soldOut);
  }

  private static String order(WorkflowClient client, OrderSettings settings, String key, String sku, boolean pay)
      throws Exception {
    String id = WorkflowIds.forScope("t1", "user-1", key);
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(WorkflowIds.TASK_QUEUE).build());
    WorkflowClient.start(wf::run, new OrderStart("t1", "user-1", key, null, settings));
    CreateResult created = wf.create(new CreateOrder("t1", "user-1", key, sku, 1, null));
    if (pay) {
      assertEquals(CreateOutcome.CREATED, created.outcome());
      assertEquals(OrderStatus.PAID, wf.pay().status());
    }
    WorkflowStub.fromTyped(wf).getResult(10, TimeUnit.SECONDS, Void.class);
    return id;
  }

  static final String SOLD_OUT_SKU = "sku-sold-out";

  private static OrderView view(String orderId, OrderStatus status, int version) {
    return new OrderView(orderId, "t1", "user-1", "sku-1", 1, 100, status, version, "res-" + orderId);
  }

  /**
   * Just enough of the activities for a create and a pay, as proxies (the activity interfaces may
   * grow; anything else throws, and the orders here never call it).
   */
  private static <T> T fake(Class<T> type) {
    InvocationHandler h = (proxy, method, args) -> switch (method.getName()) {
      case "reserve" -> {
        CreateOrder request = (CreateOrder) args[0];
        yield SOLD_OUT_SKU.equals(request.sku())
            ? new CreateResult(CreateOutcome.SOLD_OUT, null, List.of(), null)
            : new CreateResult(CreateOutcome.CREATED, view("ord-" + request.requestKey(), OrderStatus.CREATED, 1),
                List.of(), null);
      }
      case "beginPay" -> new Step("PAYING", view((String) args[0], OrderStatus.PAYING, 2), List.of());
      case "charge" -> new ChannelAnswer(ChannelResult.CHARGED, "txn-000001", null);
      case "applyChannelAnswer" -> new Step("PAID", view((String) args[0], OrderStatus.PAID, 3), List.of());
      case "toString" -> "fake " + type.getSimpleName();
      case "hashCode" -> System.identityHashCode(proxy);
      case "equals" -> proxy == args[0];
      default -> throw new UnsupportedOperationException(method.getName());
    };
    return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, h));
  }

  // ------------------------------------------------------------ helpers

  private static Set<String> updateNames(WorkflowExecutionHistory h) {
    Set<String> names = new TreeSet<>();
    for (HistoryEvent e : h.getEvents()) {
      if (e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED) {
        names.add(e.getWorkflowExecutionUpdateAcceptedEventAttributes().getAcceptedRequest().getInput().getName());
      }
    }
    return names;
  }

  record Run(int code, String out, String err) {}

  private static Run command(ReplayGate gate, String dir) {
    return command(gate, dir, "127.0.0.1:7233");
  }

  private static Run command(ReplayGate gate, String dir, String target) {
    return command(gate, dir, target, 5);
  }

  /** ReplayCommand's body (everything but System.exit), its output captured. */
  private static Run command(ReplayGate gate, String dir, String target, int limit) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = ReplayCommand.execute(gate, dir, target, "default", ReplayGate.DEFAULT_QUERY, limit,
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  record Proc(int code, String output) {}

  private static Proc app(String... args) throws Exception {
    String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> cmd = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp", cp,
        "io.flashsale.launcher.FlashsaleApplication"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).directory(new File(".")).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "replay process did not end");
    return new Proc(p.exitValue(), output);
  }

  @Test
  void outcomeLines() {
    assertEquals("OK a", ReplayGate.Outcome.ok("a").line());
    assertEquals("FAILED b: why", ReplayGate.Outcome.failed("b", "why").line());
    assertNull(ReplayGate.Outcome.ok("a").reason());
  }
}
