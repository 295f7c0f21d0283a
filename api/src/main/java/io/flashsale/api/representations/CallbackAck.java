package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A callback was accepted: recorded as an arrival (with its effect when it is a copy of a notice
 * the order already applied), or (an order this service never had) only acknowledged.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CallbackAck(boolean accepted, String effect, Long arrival) {}
