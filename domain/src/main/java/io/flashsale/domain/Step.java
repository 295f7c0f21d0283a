package io.flashsale.domain;

import java.util.List;

/**
 * What one activity did to an order: the effect (e.g. PAID, DUPLICATE PAID, REJECTED CREATED),
 * the order after it and the transitions it committed.
 */
public record Step(String effect, OrderView order, List<Transition> transitions) {}
