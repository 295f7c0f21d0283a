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
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerOptions;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * One order's workflow on Temporal's time-skipping test server, with a worker whose activities
 * are an in-memory {@link FakeOrderBackend}. Time only skips while the test waits for a result
 * or sleeps on {@link #env}; otherwise it runs at wall-clock pace.
 */
final class OrderTestHarness implements AutoCloseable {
  static final String WF = "order:t1:user-1:k1";

  final TestWorkflowEnvironment env;
  final WorkflowClient client;
  final FakeOrderBackend backend = new FakeOrderBackend();

  OrderTestHarness() {
    this(true);
  }

  /**
   * activityWorker false: the worker runs workflows and local database steps but polls no activity
   * tasks, so the channel's activities find no worker.
   */
  OrderTestHarness(boolean activityWorker) {
    this(activityWorker, true);
  }

  /**
   * pollNow false: the worker polls only after {@link #startPolling}, so whatever the client sent
   * meanwhile (a start, updates) reaches the run in one first workflow task.
   */
  OrderTestHarness(boolean activityWorker, boolean pollNow) {
    env = TestWorkflowEnvironment.newInstance();
    backend.engineClock = env::currentTimeMillis;
    for (String name : List.of("OrderId", "OrderStatus", "Sku", "Tenant", "OrderAttention")) {
      env.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    Worker worker = env.newWorker(WorkflowIds.TASK_QUEUE,
        WorkerOptions.newBuilder().setLocalActivityWorkerOnly(!activityWorker).build());
    worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
    if (activityWorker) {
      worker.registerActivitiesImplementations(backend.db, backend.channel);
    } else {
      worker.registerActivitiesImplementations(backend.db);
    }
    if (pollNow) env.start();
    client = env.getWorkflowClient();
  }

  void startPolling() {
    env.start();
  }

  @Override
  public void close() {
    env.close();
  }

  /** A fresh run, waiting for its create; start carries an order id for a run that loads one. */
  OrderWorkflow startRun(OrderStart start) {
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(WF).setTaskQueue(WorkflowIds.TASK_QUEUE).build());
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
