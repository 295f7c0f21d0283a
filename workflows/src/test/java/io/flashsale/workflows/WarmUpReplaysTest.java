package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import org.junit.jupiter.api.Test;

class WarmUpReplaysTest {
  @Test
  void theBundledHistoriesReplayAgainstTheOrderWorkflowOfThisBuild() throws Exception {
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance();
        WarmUpReplays replays = new WarmUpReplays(env.getWorkflowClient())) {
      assertEquals(2, WarmUpReplays.histories().size());
      for (int n = 0; n < 4; n++) replays.replay(n); // each history twice: a replay leaves nothing behind
    }
  }

  @Test
  void aHistoryTheOrderWorkflowDidNotWriteIsRefused() throws Exception {
    // the paid history with its charge recorded as another activity type: the replay must notice,
    // so the warm-up's replays really run the workflow code against the events
    WorkflowExecutionHistory paid = WarmUpReplays.histories().get(0);
    String json = paid.toJson(false);
    assertTrue(json.contains("\"Charge\""), "the paid history has its charge");
    WorkflowExecutionHistory changed = WorkflowExecutionHistory.fromJson(json.replace("\"Charge\"", "\"ChargeElsewhere\""));
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
      Worker worker = env.newWorker(WorkflowIds.TASK_QUEUE);
      worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
      assertThrows(Exception.class, () -> worker.replayWorkflowExecution(changed));
      worker.replayWorkflowExecution(paid); // the same worker replays the recorded one
    }
  }
}
