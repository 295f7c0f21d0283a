package io.flashsale.tools.bench;

import io.flashsale.workflows.OrderWorkflow;
import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;
import io.temporal.activity.LocalActivityOptions;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WithStartWorkflowOperation;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowUpdateStage;
import io.temporal.common.SearchAttributes;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerFactoryOptions;
import io.temporal.worker.WorkerOptions;
import io.temporal.workflow.UpdateMethod;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.time.Duration;

/**
 * The engine ceiling: the least an order must cost the engine. A workflow started exactly like an
 * order (update-with-start, Tenant and Sku set at start, a summary), whose update runs one no-op
 * local activity and upserts the two attributes a created order gains (OrderId, OrderStatus), then
 * waits on one timer. Its worker runs in the service JVM with the orders' worker options; the load
 * JVM drives it at the bench's concurrency. It is to the engine what the JDBC ceiling is to the
 * database (docs/DESIGN.md §Performance).
 */
public final class EngineCeiling {
  /** Its own task queue: the orders' worker never sees these workflows. */
  public static final String TASK_QUEUE = "bench-engine-ceiling";
  /** Longer than any scenario: the timer is pending, never fired, inside the window; the load ends the runs after it. */
  public static final Duration HOLD = Duration.ofMinutes(10);

  private EngineCeiling() {}

  @WorkflowInterface
  public interface OrderShaped {
    @WorkflowMethod
    void run(long holdMillis);

    /** The create: one local step, the order's attributes, the answer. */
    @UpdateMethod
    String create(String orderId);
  }

  @ActivityInterface
  public interface Step {
    @ActivityMethod
    String admit(String orderId);
  }

  /** The no-op in place of the admission transaction. */
  public static final class NoStep implements Step {
    @Override
    public String admit(String orderId) {
      return orderId;
    }
  }

  public static final class OrderShapedImpl implements OrderShaped {
    private final Step step = Workflow.newLocalActivityStub(Step.class,
        LocalActivityOptions.newBuilder().setStartToCloseTimeout(Duration.ofSeconds(10)).build());
    private String orderId;

    @Override
    public void run(long holdMillis) {
      Workflow.await(() -> orderId != null);
      Workflow.sleep(Duration.ofMillis(holdMillis));
    }

    @Override
    public String create(String id) {
      String admitted = step.admit(id);
      Workflow.upsertTypedSearchAttributes(OrderWorkflow.ORDER_ID.valueSet(admitted),
          OrderWorkflow.ORDER_STATUS.valueSet("CREATED"));
      orderId = admitted;
      return admitted;
    }
  }

  /** The ceiling's worker, in the service JVM beside the orders' one, with the same options and cache size. */
  public static WorkerFactory startWorker(WorkflowClient client, WorkerFactoryOptions cache, WorkerOptions options) {
    WorkerFactory factory = WorkerFactory.newInstance(client, cache);
    io.temporal.worker.Worker worker = factory.newWorker(TASK_QUEUE, options);
    worker.registerWorkflowImplementationTypes(OrderShapedImpl.class);
    worker.registerActivitiesImplementations(new NoStep());
    factory.start();
    return factory;
  }

  /** One create, as Orders.create makes it: returns the order id the update answered. */
  static String create(WorkflowClient client, String workflowId, String tenant, String sku) {
    WorkflowOptions options = WorkflowOptions.newBuilder()
        .setWorkflowId(workflowId)
        .setTypedSearchAttributes(SearchAttributes.newBuilder()
            .set(OrderWorkflow.TENANT, tenant).set(OrderWorkflow.SKU, sku).build())
        .setStaticSummary("order-shaped " + sku + " for " + tenant)
        .setTaskQueue(TASK_QUEUE)
        .setWorkflowIdConflictPolicy(WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
        .build();
    OrderShaped wf = client.newWorkflowStub(OrderShaped.class, options);
    WithStartWorkflowOperation<Void> start = new WithStartWorkflowOperation<>(wf::run, HOLD.toMillis());
    UpdateOptions<String> update = UpdateOptions.<String>newBuilder()
        .setWaitForStage(WorkflowUpdateStage.COMPLETED).build();
    return WorkflowClient.executeUpdateWithStart(wf::create, workflowId, update, start);
  }
}
