package io.flashsale.domain;

/** How a pay or cancel was answered when it did not simply run (a pay that ran has no outcome). */
public enum CommandOutcome {
  /** The order's state refuses the command. */
  REJECTED,
  CANCELLED,
  /** A cancel of an order already cancelled. */
  REPLAY_CANCEL,
  NOT_FOUND
}
