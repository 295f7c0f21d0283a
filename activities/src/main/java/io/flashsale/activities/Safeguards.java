package io.flashsale.activities;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The safeguards of the payment path that the negative controls (C29-14..17, C29-19) switch off,
 * to show that reconciliation catches the damage, and PBT-01's controls, to show that its
 * properties do. One instance is given to the activities when the worker is wired; all are on,
 * and no configuration key, command or endpoint reaches them: only code holding the instance (an
 * in-process experiment) can switch one off.
 */
public final class Safeguards {

  public enum Safeguard {
    /** C29-14: a charge timeout is UNKNOWN (query, then close), never a failure and a release. */
    TIMEOUT_IS_UNKNOWN,
    /** C29-15: NOT_FOUND fails the order only after the channel closed the charge. */
    CLOSE_BEFORE_FAIL,
    /**
     * C29-16: a success moves the order to PAID only from CREATED, PAYING or UNKNOWN (the rule in
     * {@code PaymentRules.onCharged}); off, a success is applied from any status. Only this rule:
     * the row lock, the conditional write and the confirm stay. Off, a copy of an applied success
     * is no longer answered at arrival either (that shortcut is this rule's answer,
     * {@code Notifications.recordArrival}), so copies reach the broken rule too.
     */
    TRANSITION_PRECONDITION,
    /**
     * C29-16: the status write carries {@code AND status = ? AND version = ?}, so a decision made
     * on a row that has moved since is refused. Off, only that SQL condition is dropped.
     */
    CONDITIONAL_WRITE,
    /**
     * C29-16: every decision reads the order under {@code SELECT … FOR UPDATE}. Off, the row is
     * read without the lock (the conditional write then is the only protection left).
     */
    ROW_LOCK,
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
