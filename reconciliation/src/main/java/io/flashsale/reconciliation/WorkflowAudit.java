package io.flashsale.reconciliation;

import io.flashsale.domain.OrderState;
import io.flashsale.domain.OrderStatus;
import io.flashsale.workflows.OrderWorkflow;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reconciliation checks no database anchor can make: each order's workflow against its row.
 * A non-final order without a running workflow is an orphan: nothing would ever converge it.
 *
 * <p>On an engine with visibility (dev server, cluster) one listing of the running order
 * workflows settles every final order whose workflow has ended without a call per order (after a
 * sale, nearly all of them). Running workflows are queried, since only they know the version they
 * hold; visibility is eventually consistent, so a non-final order it does not list as running is
 * described before it is reported. The in-memory engine has no listing: every order is described.
 */
public final class WorkflowAudit implements Reconciler.WorkflowCheck {
  private static final Logger log = LoggerFactory.getLogger(WorkflowAudit.class);
  private static final String RUNNING_ORDERS = "WorkflowType = 'OrderWorkflow' AND ExecutionStatus = 'Running'";

  private final WorkflowServiceStubs service;
  private final WorkflowClient client;
  private final String namespace;
  /** Ids of the running order workflows, or null without visibility. */
  private volatile Set<String> running;
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
  private Set<String> listRunning() {
    Set<String> found = new HashSet<>();
    com.google.protobuf.ByteString page = com.google.protobuf.ByteString.EMPTY;
    try {
      do {
        ListWorkflowExecutionsResponse r = service.blockingStub().listWorkflowExecutions(
            ListWorkflowExecutionsRequest.newBuilder().setNamespace(namespace).setQuery(RUNNING_ORDERS)
                .setPageSize(1000).setNextPageToken(page).build());
        for (var info : r.getExecutionsList()) {
          found.add(info.getExecution().getWorkflowId());
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
    Set<String> visible = running;
    if (visible != null && !visible.contains(workflowId) && OrderStatus.valueOf(status).isTerminal()) {
      // a final order whose workflow is not running: nothing to compare, no call needed
      confirmedByVisibility++;
      return List.of();
    }
    // a running workflow is queried (only it knows the version it holds); a non-final order that
    // visibility does not list as running may just not be indexed yet: describe before flagging
    return describeAndQuery(orderId, workflowId, status, version);
  }

  private List<String> describeAndQuery(String orderId, String workflowId, String status, int version) {
    WorkflowExecutionStatus run;
    try {
      var latest = WorkflowRuns.latest(service, namespace, workflowId);
      if (latest.isEmpty()) {
        return OrderStatus.valueOf(status).isTerminal() ? List.of()
            : List.of(orderId + " " + status + " ORPHAN no workflow");
      }
      run = latest.get();
    } catch (io.grpc.StatusRuntimeException e) {
      return List.of(orderId + " " + status + " WORKFLOW_UNREACHABLE " + e.getStatus().getCode());
    }
    if (run != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) {
      return OrderStatus.valueOf(status).isTerminal() ? List.of()
          : List.of(orderId + " " + status + " ORPHAN workflow " + WorkflowRuns.label(run));
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
