package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** A page of own orders in creation order; {@code next_cursor} is null on the last page. */
public record OrderPage(List<OrderSummary> orders, @JsonProperty("next_cursor") String nextCursor) {}
