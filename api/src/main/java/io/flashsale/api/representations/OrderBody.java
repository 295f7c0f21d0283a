package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import java.util.List;

/**
 * One order in full. A create that made the order answers the same body with {@code outcome}
 * CREATED first; a read has no outcome.
 */
public record OrderBody(
    @JsonInclude(JsonInclude.Include.NON_NULL) CreateOutcome outcome,
    @JsonProperty("order_id") String orderId, OrderStatus status, int version, String sku, int quantity, long amount,
    @JsonProperty("request_key") String requestKey, @JsonProperty("created_at") String createdAt, String note,
    Reservation reservation, @JsonProperty("workflow_id") String workflowId, List<StatusChange> timeline) {

  public record Reservation(String key, String status) {}

  public static OrderBody of(OrderDetails o) {
    return of(null, o);
  }

  public static OrderBody of(CreateOutcome outcome, OrderDetails o) {
    return new OrderBody(outcome, o.orderId(), o.status(), o.version(), o.sku(), o.quantity(), o.amount(),
        o.requestKey(), o.createdAt(), o.note(), new Reservation(o.reservationKey(), o.reservationStatus()),
        o.workflowId(), o.timeline().stream().map(StatusChange::of).toList());
  }
}
