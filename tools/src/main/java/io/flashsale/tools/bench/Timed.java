package io.flashsale.tools.bench;

/** One request's answer (the outcome, e.g. CREATED, SOLD_OUT, PAID, or HTTP_503) and how long it took. */
public record Timed(String outcome, long nanos) {}
