package io.flashsale.api.core;

import io.flashsale.activities.Reconciler;
import io.flashsale.workflows.OrderState;
import io.flashsale.workflows.OrderStatus;
import io.flashsale.workflows.OrderWorkflow;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.List;

/**
 * The reconciliation checks no database anchor can make: each order's workflow, by describe and
 * query (the embedded engine has no visibility listing), against its row. A non-final order
 * without a running workflow is an orphan: nothing would ever converge it.
 */
public final class WorkflowAudit implements Reconciler.WorkflowCheck {
  private final WorkflowServiceStubs service;
  private final WorkflowClient client;
  private final String namespace;

  public WorkflowAudit(WorkflowServiceStubs service, WorkflowClient client, String namespace) {
    this.service = service;
    this.client = client;
    this.namespace = namespace;
  }

  @Override
  public List<String> check(String orderId, String workflowId, String status, int version) {
    WorkflowExecutionStatus run;
    try {
      run = service.blockingStub().describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
              .setNamespace(namespace)
              .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId))
              .build())
          .getWorkflowExecutionInfo().getStatus();
    } catch (io.grpc.StatusRuntimeException e) {
      if (e.getStatus().getCode() != io.grpc.Status.Code.NOT_FOUND) {
        return List.of(orderId + " " + status + " WORKFLOW_UNREACHABLE " + e.getStatus().getCode());
      }
      return OrderStatus.valueOf(status).isTerminal() ? List.of()
          : List.of(orderId + " " + status + " ORPHAN no workflow");
    }
    if (run != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) {
      return OrderStatus.valueOf(status).isTerminal() ? List.of()
          : List.of(orderId + " " + status + " ORPHAN workflow " + run.name().replace("WORKFLOW_EXECUTION_STATUS_", ""));
    }
    OrderState state;
    try {
      state = client.newWorkflowStub(OrderWorkflow.class, workflowId).status();
    } catch (io.temporal.client.WorkflowException | io.grpc.StatusRuntimeException e) {
      return List.of(orderId + " " + status + " WORKFLOW_UNREACHABLE " + e.getClass().getSimpleName());
    }
    if (state.order() == null) {
      return List.of(orderId + " " + status + " WORKFLOW_WITHOUT_ORDER");
    }
    if (!state.order().status().name().equals(status) || state.order().version() != version) {
      return List.of(orderId + " " + status + " WORKFLOW_MISMATCH workflow=" + state.order().status() + " v"
          + state.order().version() + " row=" + status + " v" + version);
    }
    return List.of();
  }
}
