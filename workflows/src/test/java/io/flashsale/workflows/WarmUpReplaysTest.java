package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import org.junit.jupiter.api.Test;

class WarmUpReplaysTest {
  @Test
  void theBundledHistoriesReplayAgainstTheOrderWorkflowOfThisBuild() throws Exception {
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
      Worker worker = env.newWorker(WorkflowIds.TASK_QUEUE);
      worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
      WarmUpReplays replays = new WarmUpReplays(worker);
      assertEquals(2, WarmUpReplays.histories().size());
      for (int n = 0; n < 4; n++) replays.replay(n); // each history twice: a replay leaves nothing behind
    }
  }

  @Test
  void aWorkerWithoutTheOrderWorkflowCannotReplayThem() {
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
      Worker worker = env.newWorker("another-queue");
      worker.registerWorkflowImplementationTypes(WarmUpWorkflowImpl.class);
      assertThrows(Exception.class, () -> new WarmUpReplays(worker).replay(0));
    }
  }
}
