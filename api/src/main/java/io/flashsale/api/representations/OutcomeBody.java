package io.flashsale.api.representations;

import com.fasterxml.jackson.annotation.JsonInclude;

/** A create that made no order (SOLD_OUT, USER_LIMIT, …), or one refused for load (OVERLOADED, with a message). */
public record OutcomeBody(String outcome, @JsonInclude(JsonInclude.Include.NON_NULL) String message) {}
