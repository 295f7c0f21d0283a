package io.flashsale.devstack.replay;

import io.flashsale.workflows.CommandResult;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.temporal.workflow.Workflow;
import java.time.Duration;

/**
 * The negative control: OrderWorkflowImpl with one unversioned change in the pay step, a timer
 * before anything else (no Workflow.getVersion). Its type is still OrderWorkflow (the interface's
 * name), so recorded histories are replayed on it; every history with a pay update must fail,
 * every other one must still pass.
 */
public class ChangedOrderWorkflow extends OrderWorkflowImpl {
  @io.temporal.workflow.WorkflowInit
  public ChangedOrderWorkflow(io.flashsale.workflows.OrderStart start) {
    super(start);
  }

  @Override
  public CommandResult pay() {
    Workflow.sleep(Duration.ofSeconds(1));
    return super.pay();
  }
}
