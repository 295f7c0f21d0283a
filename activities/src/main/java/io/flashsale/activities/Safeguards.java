package io.flashsale.activities;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The safeguards of the payment path that the negative controls (C29-14..17, C29-19) switch off
 * one at a time, to show that reconciliation catches the damage. One instance is given to the
 * activities when the worker is wired; all are on, and no configuration key, command or endpoint
 * reaches them: only code holding the instance (an in-process experiment) can switch one off.
 */
public final class Safeguards {

  public enum Safeguard {
    /** C29-14: a charge timeout is UNKNOWN (query, then close), never a failure and a release. */
    TIMEOUT_IS_UNKNOWN,
    /** C29-15: NOT_FOUND fails the order only after the channel closed the charge. */
    CLOSE_BEFORE_FAIL,
    /** C29-16: a success notice moves the order only from the status it expects. */
    TRANSITION_PRECONDITION,
    /** C29-17: PAID only when confirming the reservation took effect. */
    CONFIRM_MUST_TAKE_EFFECT,
    /**
     * C29-19: the ORDER_PAID event is written in the transaction that makes the order PAID. Off,
     * the payment steps do a dual write: PAID committed first, the event in a second transaction.
     */
    PAID_EVENT_IN_SAME_TX
  }

  private final Set<Safeguard> off = ConcurrentHashMap.newKeySet();

  public boolean on(Safeguard safeguard) {
    return !off.contains(safeguard);
  }

  public void switchOff(Safeguard safeguard) {
    off.add(safeguard);
  }

  public void restore() {
    off.clear();
  }
}
