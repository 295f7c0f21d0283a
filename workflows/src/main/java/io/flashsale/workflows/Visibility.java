package io.flashsale.workflows;

import static io.flashsale.workflows.OrderWorkflow.ORDER_ID;
import static io.flashsale.workflows.OrderWorkflow.ORDER_STATUS;
import static io.flashsale.workflows.OrderWorkflow.SKU;
import static io.flashsale.workflows.OrderWorkflow.TENANT;

import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.OrderView;
import io.temporal.common.SearchAttributeUpdate;
import io.temporal.common.SearchAttributes;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a run shows to visibility and the Web UI: the search attributes and summary it starts with
 * (set by {@link Orders}), the search attributes it upserts as the order's status changes, and its
 * current details (docs/DESIGN.md §Workflow design, "Search attributes"). The attention flag is the
 * database steps' ({@link DatabaseSteps}).
 */
final class Visibility {
  private Visibility() {}

  /** Tenant and SKU are known at start, so the Web UI and visibility can filter on them at once. */
  static SearchAttributes atStart(String tenant, String sku) {
    SearchAttributes.Builder attributes = SearchAttributes.newBuilder().set(TENANT, tenant);
    if (sku != null) attributes.set(SKU, sku);
    return attributes.build();
  }

  /** The static summary of a run started by a create. */
  static String createSummary(CreateOrder req) {
    return "order " + req.sku() + " x" + req.quantity() + " for " + req.tenant() + "/" + req.subject();
  }

  /** The static summary of a run started by a notice for an order whose run had ended. */
  static String lateNoticeSummary(String orderId) {
    return "order " + orderId + " (late notice)";
  }

  /** The static summary of a run that resumes an orphaned order. */
  static String resumedSummary(String orderId) {
    return "order " + orderId + " (resumed from the database)";
  }

  /**
   * The order's status changed (or it is the run's first order). Lean: the first change upserts
   * OrderId, OrderStatus and those of Tenant and Sku the start did not set, later ones OrderStatus
   * alone; before {@link ChangeIds#LEAN_HISTORY}, a memo OrderId and all four, every time.
   */
  static void statusChanged(OrderView before, OrderView order) {
    boolean lean = ChangeIds.leanHistory();
    if (before == null && !lean) {
      Workflow.upsertMemo(Map.of("OrderId", order.orderId()));
    }
    if (before == null && lean) {
      // the start carries Tenant and, from a create, Sku: upsert only what it did not set
      List<SearchAttributeUpdate<?>> updates = new ArrayList<>(List.of(
          ORDER_ID.valueSet(order.orderId()), ORDER_STATUS.valueSet(order.status().name())));
      SearchAttributes atStart = Workflow.getTypedSearchAttributes();
      if (!order.sku().equals(atStart.get(SKU))) updates.add(SKU.valueSet(order.sku()));
      if (!order.tenant().equals(atStart.get(TENANT))) updates.add(TENANT.valueSet(order.tenant()));
      Workflow.upsertTypedSearchAttributes(updates.toArray(SearchAttributeUpdate<?>[]::new));
    } else if (!lean) {
      Workflow.upsertTypedSearchAttributes(
          ORDER_ID.valueSet(order.orderId()),
          ORDER_STATUS.valueSet(order.status().name()),
          SKU.valueSet(order.sku()),
          TENANT.valueSet(order.tenant()));
    } else {
      Workflow.upsertTypedSearchAttributes(ORDER_STATUS.valueSet(order.status().name()));
    }
  }

  /** The current details after a step: {@code <id> <status> v<n> · last effect: …}. */
  static void details(OrderView order, String lastEffect) {
    Workflow.setCurrentDetails(
        order.orderId() + " " + order.status() + " v" + order.version() + " · last effect: " + lastEffect);
  }

  /** The current details while a step waits for an operator (order null: none yet). */
  static void attentionDetails(OrderView order, String effect) {
    Workflow.setCurrentDetails((order == null ? "" : order.orderId() + " " + order.status() + " · ") + effect);
  }
}
