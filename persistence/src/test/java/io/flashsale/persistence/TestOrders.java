package io.flashsale.persistence;

import io.flashsale.domain.OrderStatus;

/** Orders as the create writes them: the row at CREATED v1 and its first transition. */
final class TestOrders {
  static final String TENANT = "t1";
  static final String CREATE_CAUSE = "create";

  private TestOrders() {}

  /** The row a create would insert for this owner; nothing is written. */
  static OrderRow unsaved(String orderId, String tenant, String subject, String requestKey) {
    return new OrderRow(orderId, tenant, subject, requestKey, "{\"sku\":\"sku-1\",\"quantity\":1}", "sku-1", 1, 1990,
        OrderStatus.CREATED, 1, Inventory.firstReservationKey(orderId), 1, "order-" + orderId);
  }

  /** Inserts a CREATED v1 order with a request key of its own, issued from sequence number {@code seq}. */
  static OrderRow create(Database db, String orderId, long seq, String tenant, String subject) {
    OrderRow row = unsaved(orderId, tenant, subject, "req-" + orderId);
    db.inTx(c -> OrderTransitions.insertCreated(c, row, seq, null, CREATE_CAUSE));
    return row;
  }

  /** Inserts a CREATED v1 order with a request key of its own (its seq: the sequence's next number). */
  static OrderRow create(Database db, String orderId, String tenant, String subject) {
    OrderRow row = unsaved(orderId, tenant, subject, "req-" + orderId);
    db.inTx(c -> OrderTransitions.insertCreated(c, row, null, CREATE_CAUSE));
    return row;
  }
}
