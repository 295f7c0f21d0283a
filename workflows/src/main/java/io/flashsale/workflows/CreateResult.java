package io.flashsale.workflows;

import java.util.List;

/** Outcome of a create: CREATED, REPLAY, SOLD_OUT, USER_LIMIT or KEY_REUSED. */
public record CreateResult(String outcome, OrderView order, List<Transition> transitions) {
  public static final String CREATED = "CREATED";
  public static final String REPLAY = "REPLAY";
  public static final String SOLD_OUT = "SOLD_OUT";
  public static final String USER_LIMIT = "USER_LIMIT";
  public static final String KEY_REUSED = "KEY_REUSED";
  public static final String UNKNOWN_SKU = "UNKNOWN_SKU";
}
