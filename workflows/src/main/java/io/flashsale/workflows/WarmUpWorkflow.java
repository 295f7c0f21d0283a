package io.flashsale.workflows;

import io.temporal.workflow.UpdateMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * A run with no effect that an instance makes while it warms up (docs/DESIGN.md §Warm from the
 * first buyer): started by an update as an order's run is, it runs one local activity in the
 * update's handler, answers, and ends. It touches no order, no stock and no table, so the engine
 * path of a create (client, server, worker, the update and local-activity machinery) is compiled
 * before the first buyer's create without a single order made.
 */
@WorkflowInterface
public interface WarmUpWorkflow {
  /** Its type in the engine; order listings ask for {@code WorkflowType = 'OrderWorkflow'}. */
  String TYPE = "WarmUp";

  @WorkflowMethod(name = TYPE)
  void run();

  /** Answers {@code token} once the local activity has echoed it. */
  @UpdateMethod
  String touch(String token);
}
