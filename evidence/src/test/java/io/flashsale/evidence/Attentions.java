package io.flashsale.evidence;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import java.util.List;

/**
 * An order's raised hand (docs/DESIGN.md §Every order ends, "Attention") as the experiments read
 * it: the row's {@code orders.attention}, the run's search attribute {@code OrderAttention}, and
 * the convergence round at the channel in flight (the server's pending activity: its attempt).
 */
final class Attentions {
  static final String SEARCH_ATTRIBUTE = "OrderAttention";
  /** The channel's convergence round (ChannelActivities.converge) as the history names it. */
  static final String CONVERGE = "Converge";

  private Attentions() {}

  static String workflowId(Stack stack, String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  /** orders.attention, or null. */
  static String row(Stack stack, String orderId) {
    return stack.sql.text("SELECT attention FROM orders WHERE order_id = ?", orderId);
  }

  static DescribeWorkflowExecutionResponse describe(Stack stack, String workflowId) {
    return stack.wiring.temporal().service().blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder().setNamespace("default")
            .setExecution(io.temporal.api.common.v1.WorkflowExecution.newBuilder().setWorkflowId(workflowId))
            .build());
  }

  /** The latest run's OrderAttention (describe, not visibility), or null when unset. */
  static String searchAttribute(Stack stack, String workflowId) {
    var payload = describe(stack, workflowId).getWorkflowExecutionInfo().getSearchAttributes()
        .getIndexedFieldsMap().get(SEARCH_ATTRIBUTE);
    if (payload == null) return null;
    String json = payload.getData().toStringUtf8();
    return json.isEmpty() || json.equals("null") || json.equals("[]") ? null : json.replace("\"", "");
  }

  /** The convergence round in flight, if any (its attempt, next attempt, last failure). */
  static PendingActivityInfo pendingRound(Stack stack, String workflowId) {
    return describe(stack, workflowId).getPendingActivitiesList().stream()
        .filter(a -> a.getActivityType().getName().equals(CONVERGE)).findFirst().orElse(null);
  }

  /** One line about the round in flight: attempt, next attempt's time, last failure. */
  static String describeRound(PendingActivityInfo a) {
    if (a == null) return "no round in flight";
    String failure = a.hasLastFailure() ? a.getLastFailure().getMessage() : "none";
    return "round in flight: attempt " + a.getAttempt() + ", state " + a.getState().name().replace("PENDING_ACTIVITY_STATE_", "")
        + (a.hasNextAttemptScheduleTime() ? ", next attempt at " + seconds(a.getNextAttemptScheduleTime()) + " s (engine clock)" : "")
        + ", last failure: " + failure;
  }

  private static long seconds(com.google.protobuf.Timestamp t) {
    return t.getSeconds();
  }

  /** The attempt of each ended convergence round, as its ACTIVITY_TASK_STARTED records it, in order. */
  static List<Integer> endedRoundAttempts(List<HistoryEvent> events) {
    java.util.Set<Long> converge = new java.util.HashSet<>();
    java.util.List<Integer> attempts = new java.util.ArrayList<>();
    for (HistoryEvent e : events) {
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
          && e.getActivityTaskScheduledEventAttributes().getActivityType().getName().equals(CONVERGE)) {
        converge.add(e.getEventId());
      } else if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
          && converge.contains(e.getActivityTaskStartedEventAttributes().getScheduledEventId())) {
        attempts.add(e.getActivityTaskStartedEventAttributes().getAttempt());
      }
    }
    return attempts;
  }

  /** The convergence rounds scheduled so far. */
  static long roundsScheduled(List<HistoryEvent> events) {
    return events.stream().filter(e -> e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        && e.getActivityTaskScheduledEventAttributes().getActivityType().getName().equals(CONVERGE)).count();
  }

  /** The history's event types, shortened, in order. */
  static String types(List<HistoryEvent> events) {
    return events.stream().map(e -> e.getEventType().name().replace("EVENT_TYPE_", "")
        .replace("WORKFLOW_EXECUTION_", "WE_").replace("WORKFLOW_TASK_", "WT_").replace("ACTIVITY_TASK_", "AT_"))
        .collect(java.util.stream.Collectors.joining(" "));
  }
}
