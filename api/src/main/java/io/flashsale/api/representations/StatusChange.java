package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.OrderQueries.TimelineEntry;

/**
 * One transition of an order: in its timeline, and as the data of an event-stream message, which
 * also names the order ({@code order_id}, absent inside a timeline).
 */
public record StatusChange(
    @JsonInclude(JsonInclude.Include.NON_NULL) @JsonProperty("order_id") String orderId,
    @JsonProperty("from_status") OrderStatus fromStatus, @JsonProperty("to_status") OrderStatus toStatus, int version,
    String cause, String at) {

  public static StatusChange of(TimelineEntry t) {
    return of(null, t);
  }

  public static StatusChange of(String orderId, TimelineEntry t) {
    return new StatusChange(orderId, t.fromStatus(), t.toStatus(), t.version(), t.cause(), t.at());
  }
}
