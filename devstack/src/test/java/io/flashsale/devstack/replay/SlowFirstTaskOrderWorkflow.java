package io.flashsale.devstack.replay;

import io.flashsale.workflows.OrderStart;
import io.flashsale.workflows.OrderWorkflowImpl;

/**
 * OrderWorkflowImpl whose first workflow task holds its thread for 1.5 s, longer than the
 * worker's default deadlock timeout (1 s): what a cold replay JVM on a loaded machine looks like.
 * The commands are unchanged, so every history must still replay on it.
 */
public class SlowFirstTaskOrderWorkflow extends OrderWorkflowImpl {
  static final long HOLD_MS = 1_500;

  @io.temporal.workflow.WorkflowInit
  public SlowFirstTaskOrderWorkflow(OrderStart start) {
    super(start);
  }

  @Override
  public void run(OrderStart start) {
    try {
      Thread.sleep(HOLD_MS); // deliberately blocking: the point is a task slower than 1 s
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    super.run(start);
  }
}
