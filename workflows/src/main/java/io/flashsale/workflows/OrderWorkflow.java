package io.flashsale.workflows;

import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderState;
import io.temporal.common.SearchAttributeKey;
import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.UpdateMethod;
import io.temporal.workflow.UpdateValidatorMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/** One workflow per order (docs/DESIGN.md §Workflow design). */
@WorkflowInterface
public interface OrderWorkflow {
  // the search attributes (Keyword) a run sets: Tenant and Sku at start, the rest as the order goes
  SearchAttributeKey<String> ORDER_ID = SearchAttributeKey.forKeyword("OrderId");
  SearchAttributeKey<String> ORDER_STATUS = SearchAttributeKey.forKeyword("OrderStatus");
  SearchAttributeKey<String> SKU = SearchAttributeKey.forKeyword("Sku");
  SearchAttributeKey<String> TENANT = SearchAttributeKey.forKeyword("Tenant");
  /** Set (DATA_ERROR) while a database step fails with an error no retry fixes: an operator looks. */
  SearchAttributeKey<String> ORDER_ATTENTION = SearchAttributeKey.forKeyword("OrderAttention");

  @WorkflowMethod
  void run(OrderStart start);

  /** First step of the order: reserve (order row + reservation + first transition, one txn). */
  @UpdateMethod
  CreateResult create(CreateOrder request);

  @UpdateMethod
  CommandResult pay();

  @UpdateMethod
  CommandResult cancel();

  /**
   * Refuses a pay the current state already refuses, so it never enters history (a server caps
   * updates per run); its answer travels in the failure ({@link CommandResult#refusedBy}).
   */
  @UpdateValidatorMethod(updateName = "pay")
  void validatePay();

  /** As for pay; a repeated cancel of a CANCELLED order is answered REPLAY_CANCEL the same way. */
  @UpdateValidatorMethod(updateName = "cancel")
  void validateCancel();

  @SignalMethod
  void paymentNotification(Notice notice);

  @QueryMethod
  OrderState status();
}
