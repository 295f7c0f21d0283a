package io.flashsale.domain;

import java.util.List;

/**
 * Answer of a create: its outcome and, for CREATED / REPLAY, the order. {@code createdAt} is the
 * order's created_at (ISO-8601 instant, also the time of its first transition) when the call that
 * made it answers, so the 201 needs no read of the row; null otherwise (a replay, a refusal, a
 * history recorded before it was kept).
 */
public record CreateResult(CreateOutcome outcome, OrderView order, List<Transition> transitions, String createdAt) {}
