package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * An instance's warm-up run (docs/DESIGN.md §Warm from the first buyer): one update-with-start
 * answers it and it ends, with nothing but its own local activity's marker in between, so it makes
 * no order, schedules no activity on any queue and leaves no run open. A run nobody answers is
 * WarmUp's to bound (launcher's WarmUpEngineRunsTest).
 */
class WarmUpWorkflowTest {
  @Test
  void oneUpdateStartsAnswersAndEndsTheRun() {
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
      WorkflowClient client = env.getWorkflowClient();
      WarmUpRuns runs = new WarmUpRuns(client);
      assertTrue(runs.taskQueue().matches("flashsale-warm-up-[0-9a-f]{8}"), runs.taskQueue());
      // the instance's own queue, polled as the service polls it: the warm-up worker and nothing else
      Worker worker = env.newWorker(runs.taskQueue());
      worker.registerWorkflowImplementationTypes(WarmUpWorkflowImpl.class);
      worker.registerActivitiesImplementations(new WarmUpActivities.Echo());
      env.start();
      made(client, runs);
    }
  }

  private static void made(WorkflowClient client, WarmUpRuns runs) {
    runs.touch(7);
    runs.touch(8);
    for (int n : new int[] {7, 8}) {
      String id = runs.workflowId(n);
      assertTrue(id.matches("warm-up-[0-9a-f]{8}-" + n), id);
      WorkflowStub stub = client.newUntypedWorkflowStub(id);
      stub.getResult(Void.class); // it ended
      assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED,
          stub.describe().getWorkflowExecutionInfo().getStatus());
      Set<EventType> kinds = client.fetchHistory(id).getHistory().getEventsList().stream()
          .map(HistoryEvent::getEventType).collect(Collectors.toSet());
      assertTrue(kinds.contains(EventType.EVENT_TYPE_MARKER_RECORDED), "its echo ran as a local activity: " + kinds);
      assertTrue(kinds.contains(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED), kinds.toString());
      assertTrue(kinds.stream().noneMatch(k -> k.name().startsWith("EVENT_TYPE_ACTIVITY_TASK")
          || k.name().startsWith("EVENT_TYPE_TIMER") || k.name().contains("CHILD")), "nothing scheduled: " + kinds);
    }
  }
}
