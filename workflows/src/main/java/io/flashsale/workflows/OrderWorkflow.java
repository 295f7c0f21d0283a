package io.flashsale.workflows;

import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.UpdateMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/** One workflow per order (SPEC §6). */
@WorkflowInterface
public interface OrderWorkflow {

  @WorkflowMethod
  void run(OrderStart start);

  /** First step of the order: reserve (order row + reservation + first transition, one txn). */
  @UpdateMethod
  CreateResult create(CreateOrder request);

  @UpdateMethod
  CommandResult pay();

  @UpdateMethod
  CommandResult cancel();

  @SignalMethod
  void paymentNotification(Notice notice);

  @QueryMethod
  OrderState status();
}
