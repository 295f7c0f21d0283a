package io.flashsale.api.core;

import io.flashsale.workflows.CommandResult;
import io.flashsale.workflows.CreateOrder;
import io.flashsale.workflows.CreateResult;
import io.flashsale.workflows.Notice;
import io.flashsale.workflows.OrderSettings;
import io.flashsale.workflows.OrderStart;
import io.flashsale.workflows.OrderWorkflow;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.flashsale.workflows.WorkflowIds;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.BatchRequest;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WithStartWorkflowOperation;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowUpdateStage;

/** The API's side of the order workflow: create by update-with-start, pay/cancel by update, notices by signal. */
public final class Orders {
  private final WorkflowClient client;
  private final OrderSettings settings;

  public Orders(WorkflowClient client, OrderSettings settings) {
    this.client = client;
    this.settings = settings;
  }

  public CreateResult create(CreateOrder req) {
    String workflowId = WorkflowIds.forScope(req.tenant(), req.subject(), req.requestKey());
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class, startOptions(workflowId, req.tenant(), req.sku(),
        "order " + req.sku() + " x" + req.quantity() + " for " + req.tenant() + "/" + req.subject()));
    WithStartWorkflowOperation<Void> start = new WithStartWorkflowOperation<>(wf::run,
        new OrderStart(req.tenant(), req.subject(), req.requestKey(), null, settings));
    return WorkflowClient.executeUpdateWithStart(wf::create, req,
        UpdateOptions.<CreateResult>newBuilder().setWaitForStage(WorkflowUpdateStage.COMPLETED).build(), start);
  }

  public CommandResult pay(String workflowId) {
    return client.newWorkflowStub(OrderWorkflow.class, workflowId).pay();
  }

  public CommandResult cancel(String workflowId) {
    return client.newWorkflowStub(OrderWorkflow.class, workflowId).cancel();
  }

  /**
   * Signal-with-start: a running workflow just gets the signal; an order whose workflow already
   * completed gets a new run that loads it from the database and applies the same rules.
   */
  public void notify(String workflowId, String tenant, String subject, String requestKey, String orderId,
      Notice notice) {
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class, startOptions(workflowId, tenant, null,
        "order " + orderId + " (late notice)"));
    BatchRequest batch = client.newSignalWithStartRequest();
    batch.add(wf::run, new OrderStart(tenant, subject, requestKey, orderId, settings));
    batch.add(wf::paymentNotification, notice);
    client.signalWithStart(batch);
  }

  /**
   * A new run for an order that has no running workflow (orphan repair): it loads the order and
   * carries on; its reservation expires at the stored deadline (-1: no longer held).
   */
  public boolean resume(String workflowId, String tenant, String subject, String requestKey, String orderId,
      String sku, long reservationExpiresAt) {
    // FAIL, not USE_EXISTING: a run that appeared since the check means this order is no orphan
    WorkflowOptions options = WorkflowOptions.newBuilder(startOptions(workflowId, tenant, sku,
            "order " + orderId + " (resumed from the database)"))
        .setWorkflowIdConflictPolicy(WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_FAIL)
        .build();
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class, options);
    try {
      WorkflowClient.start(wf::run, new OrderStart(tenant, subject, requestKey, orderId, settings, reservationExpiresAt,
          null, null));
      return true;
    } catch (io.temporal.client.WorkflowExecutionAlreadyStarted e) {
      return false;
    }
  }

  /** True once the order's workflow holds its order (a resumed run has loaded it). */
  public boolean loaded(String workflowId) {
    try {
      return client.newWorkflowStub(OrderWorkflow.class, workflowId).status().order() != null;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Tenant and SKU are known at start, so the Web UI and visibility can filter on them at once. */
  private static WorkflowOptions startOptions(String workflowId, String tenant, String sku, String summary) {
    io.temporal.common.SearchAttributes.Builder attributes = io.temporal.common.SearchAttributes.newBuilder()
        .set(OrderWorkflowImpl.TENANT, tenant);
    if (sku != null) attributes.set(OrderWorkflowImpl.SKU, sku);
    return WorkflowOptions.newBuilder()
        .setWorkflowId(workflowId)
        .setTypedSearchAttributes(attributes.build())
        .setStaticSummary(summary)
        .setTaskQueue(WorkflowIds.TASK_QUEUE)
        .setWorkflowIdConflictPolicy(WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
        .build();
  }
}
