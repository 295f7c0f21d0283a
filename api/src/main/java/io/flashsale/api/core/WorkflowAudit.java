package io.flashsale.api.core;

import io.flashsale.activities.Reconciler;
import io.flashsale.workflows.OrderState;
import io.flashsale.workflows.OrderStatus;
import io.flashsale.workflows.OrderWorkflow;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reconciliation checks no database anchor can make: each order's workflow against its row.
 * A non-final order without a running workflow is an orphan: nothing would ever converge it.
 *
 * <p>On an engine with visibility (dev server, cluster) one listing of the running order
 * workflows and their {@code OrderStatus} answers most orders at once. Visibility is eventually
 * consistent, so anything it does not confirm is checked again by describe and query before it is
 * reported; the in-memory engine has no listing, so there every order is described and queried.
 */
public final class WorkflowAudit implements Reconciler.WorkflowCheck {
  private static final Logger log = LoggerFactory.getLogger(WorkflowAudit.class);
  private static final String RUNNING_ORDERS = "WorkflowType = 'OrderWorkflow' AND ExecutionStatus = 'Running'";

  private final WorkflowServiceStubs service;
  private final WorkflowClient client;
  private final String namespace;
  /** workflow id → OrderStatus of the running order workflows, or null without visibility. */
  private volatile Map<String, String> running;
  private volatile int confirmedByVisibility;

  public WorkflowAudit(WorkflowServiceStubs service, WorkflowClient client, String namespace) {
    this.service = service;
    this.client = client;
    this.namespace = namespace;
  }

  @Override
  public void begin() {
    running = listRunning();
    confirmedByVisibility = 0;
  }

  /** Orders the last audit settled from the visibility listing alone. */
  public int confirmedByVisibility() {
    return confirmedByVisibility;
  }

  /** Null when the engine has no visibility listing. */
  private Map<String, String> listRunning() {
    Map<String, String> found = new HashMap<>();
    com.google.protobuf.ByteString page = com.google.protobuf.ByteString.EMPTY;
    try {
      do {
        ListWorkflowExecutionsResponse r = service.blockingStub().listWorkflowExecutions(
            ListWorkflowExecutionsRequest.newBuilder().setNamespace(namespace).setQuery(RUNNING_ORDERS)
                .setPageSize(1000).setNextPageToken(page).build());
        for (var info : r.getExecutionsList()) {
          var fields = info.getSearchAttributes().getIndexedFieldsMap();
          var status = fields.get(OrderWorkflowImpl.ORDER_STATUS.getName());
          found.put(info.getExecution().getWorkflowId(), status == null ? ""
              : DefaultDataConverter.STANDARD_INSTANCE.fromPayload(status, String.class, String.class));
        }
        page = r.getNextPageToken();
      } while (!page.isEmpty());
      return found;
    } catch (io.grpc.StatusRuntimeException e) {
      if (e.getStatus().getCode() != io.grpc.Status.Code.UNIMPLEMENTED) {
        log.warn("visibility listing failed ({}); describing every order", e.getStatus());
      }
      return null;
    }
  }

  @Override
  public List<String> check(String orderId, String workflowId, String status, int version) {
    Map<String, String> visible = running;
    if (visible != null) {
      boolean terminal = OrderStatus.valueOf(status).isTerminal();
      String shown = visible.get(workflowId);
      if ((shown == null && terminal) || status.equals(shown)) {
        confirmedByVisibility++;
        return List.of();
      }
      // visibility suggests a mismatch or an orphan: it may lag, so ask the workflow itself
    }
    return describeAndQuery(orderId, workflowId, status, version);
  }

  private List<String> describeAndQuery(String orderId, String workflowId, String status, int version) {
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
