package io.flashsale.workflows;

/**
 * Answer of the pay and cancel updates. outcome is null for a pay that ran (status says where it
 * got), REJECTED when the precondition failed, CANCELLED / REPLAY_CANCEL for cancel.
 */
public record CommandResult(String outcome, OrderStatus status, int version) {
  public static final String REJECTED = "REJECTED";
  public static final String CANCELLED = "CANCELLED";
  public static final String REPLAY_CANCEL = "REPLAY_CANCEL";
  public static final String NOT_FOUND = "NOT_FOUND";
}
