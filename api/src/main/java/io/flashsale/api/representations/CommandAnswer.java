package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.OrderStatus;

/** The answer to pay or cancel: the order's status and version after it; an outcome when it did not run as asked. */
public record CommandAnswer(@JsonInclude(JsonInclude.Include.NON_NULL) CommandOutcome outcome,
    @JsonProperty("order_id") String orderId, OrderStatus status, int version) {}
