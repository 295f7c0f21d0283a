package io.flashsale.domain;

import java.util.List;

/** Answer of the status query: the order as last seen plus the transitions this run saw. */
public record OrderState(OrderView order, List<String> timeline, String lastEffect) {}
