package io.flashsale.reconciliation;

import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.Optional;

/** The engine's own view of an order's latest workflow run (describe, not visibility). */
final class WorkflowRuns {
  private WorkflowRuns() {}

  /**
   * The latest run's status; empty when the engine has no run for the id. Other engine errors
   * (unreachable, ...) are thrown.
   */
  static Optional<WorkflowExecutionStatus> latest(WorkflowServiceStubs service, String namespace, String workflowId) {
    try {
      return Optional.of(service.blockingStub().describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
              .setNamespace(namespace)
              .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId))
              .build())
          .getWorkflowExecutionInfo().getStatus());
    } catch (io.grpc.StatusRuntimeException e) {
      if (e.getStatus().getCode() == io.grpc.Status.Code.NOT_FOUND) return Optional.empty();
      throw e;
    }
  }

  /** RUNNING, COMPLETED, TERMINATED, ... */
  static String label(WorkflowExecutionStatus status) {
    return status.name().replace("WORKFLOW_EXECUTION_STATUS_", "");
  }
}
