package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.OrderQueries.OrderDetails;

/** One order in a list. */
public record OrderSummary(@JsonProperty("order_id") String orderId, OrderStatus status, int version, String sku,
    int quantity, long amount, @JsonProperty("request_key") String requestKey,
    @JsonProperty("created_at") String createdAt) {

  public static OrderSummary of(OrderDetails o) {
    return new OrderSummary(o.orderId(), o.status(), o.version(), o.sku(), o.quantity(), o.amount(), o.requestKey(),
        o.createdAt());
  }
}
