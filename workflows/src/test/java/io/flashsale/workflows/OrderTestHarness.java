package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerOptions;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * One order's workflow on Temporal's time-skipping test server, with a worker whose activities
 * are an in-memory {@link FakeOrderBackend}. The engine is the SDK's {@link TestWorkflowExtension}
 * (a fresh test server and worker per test, closed after it); this harness is the test's view of
 * it. The extension's worker polls a task queue of its own, so every run a test starts, by hand or
 * through {@link #orders}, goes to {@link #taskQueue}. Time only skips while the test waits for a
 * result or sleeps on {@link #env}; otherwise it runs at wall-clock pace.
 */
final class OrderTestHarness {
  static final String WF = "order:t1:user-1:k1";
  static final List<String> SEARCH_ATTRIBUTES = List.of("OrderId", "OrderStatus", "Sku", "Tenant", "OrderAttention");

  /** The engine of a test: a worker that runs the order workflow and all of backend's activities. */
  static TestWorkflowExtension extension(FakeOrderBackend backend) {
    return extension(backend, true, true);
  }

  /**
   * activityWorker false: the worker runs workflows and local database steps but polls no activity
   * tasks, so the channel's activities find no worker. pollNow false: the worker polls only after
   * {@link #startPolling}, so whatever the client sent meanwhile (a start, updates) reaches the run
   * in one first workflow task.
   */
  static TestWorkflowExtension extension(FakeOrderBackend backend, boolean activityWorker, boolean pollNow) {
    TestWorkflowExtension.Builder builder = TestWorkflowExtension.newBuilder()
        .registerWorkflowImplementationTypes(OrderWorkflowImpl.class)
        .setActivityImplementations(activityWorker ? new Object[] {backend.db, backend.channel} : new Object[] {backend.db})
        .setWorkerOptions(WorkerOptions.newBuilder().setLocalActivityWorkerOnly(!activityWorker).build())
        .setDoNotStart(!pollNow);
    for (String name : SEARCH_ATTRIBUTES) {
      builder.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    return builder.build();
  }

  final TestWorkflowEnvironment env;
  final WorkflowClient client;
  /** The queue the extension's worker polls. */
  final String taskQueue;
  final FakeOrderBackend backend;

  /** The engine the extension made for this test (its environment and worker), backed by backend. */
  OrderTestHarness(TestWorkflowEnvironment env, Worker worker, FakeOrderBackend backend) {
    this.env = env;
    this.client = env.getWorkflowClient();
    this.taskQueue = worker.getTaskQueue();
    this.backend = backend;
    backend.engineClock = env::currentTimeMillis;
  }

  /** The API's side of the workflow, starting runs on this engine's queue. */
  Orders orders(OrderSettings settings) {
    return orders(settings, java.time.Duration.ofSeconds(10), java.time.Duration.ofSeconds(10));
  }

  /** With the commands' deadline and a create's own. */
  Orders orders(OrderSettings settings, java.time.Duration deadline, java.time.Duration createDeadline) {
    return new Orders(client, settings, deadline, createDeadline, taskQueue);
  }

  /** Options for a run of {@link #WF} started by hand. */
  WorkflowOptions.Builder runOptions() {
    return WorkflowOptions.newBuilder().setWorkflowId(WF).setTaskQueue(taskQueue);
  }

  /** For an engine built with pollNow false. */
  void startPolling() {
    env.start();
  }

  /** A fresh run, waiting for its create; start carries an order id for a run that loads one. */
  OrderWorkflow startRun(OrderStart start) {
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class, runOptions().build());
    WorkflowClient.start(wf::run, start);
    return wf;
  }

  OrderWorkflow startRun(OrderSettings settings) {
    return startRun(new OrderStart("t1", "user-1", "k1", null, settings));
  }

  /** A run whose order was created (CREATED v1). */
  OrderWorkflow created(OrderSettings settings) {
    OrderWorkflow wf = startRun(settings);
    CreateResult r = wf.create(new CreateOrder("t1", "user-1", "k1", "sku-1", 1, null));
    assertEquals(CreateOutcome.CREATED, r.outcome());
    return wf;
  }

  /** The history of the latest run. */
  List<HistoryEvent> history() {
    return client.fetchHistory(WF).getHistory().getEventsList();
  }

  long events(EventType type) {
    return history().stream().filter(e -> e.getEventType() == type).count();
  }

  /** The latest run as the server describes it. */
  WorkflowExecutionInfo describe() {
    return env.getWorkflowServiceStubs().blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder()
            .setNamespace(env.getNamespace())
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(WF))
            .build()).getWorkflowExecutionInfo();
  }

  WorkflowExecutionStatus executionStatus() {
    return client.fetchHistory(WF).getLastEvent() == null ? null : describe().getStatus();
  }

  /** Writes the run's history to target/histories, a history of the current code for the replay tests. */
  void recordHistory(String name) throws java.io.IOException {
    java.nio.file.Path dir = java.nio.file.Path.of("target", "histories");
    java.nio.file.Files.createDirectories(dir);
    java.nio.file.Files.writeString(dir.resolve(name + ".json"), client.fetchHistory(WF).toJson(true));
  }

  /** Polls (wall clock, up to 20 s) for something an activity or the workflow does in the background. */
  static void waitFor(BooleanSupplier condition) {
    long until = System.currentTimeMillis() + 20_000;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > until) throw new AssertionError("condition not met in 20 s");
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }
}
