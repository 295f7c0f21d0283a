package io.flashsale.workflows;

import java.util.List;

/** Answer of a create: its outcome and, for CREATED / REPLAY, the order. */
public record CreateResult(CreateOutcome outcome, OrderView order, List<Transition> transitions) {}
