package io.flashsale.activities;

/**
 * Test-only switches for the negative controls (C29-14..17): each turns ONE safeguard off so an
 * experiment can show that reconciliation catches the damage. They are plain static fields that
 * only test code sets; no configuration key, command or endpoint reaches them.
 */
public final class Safeguards {
  private Safeguards() {}

  /** C29-14 off: a charge timeout is taken as a failure (FAILED + release) instead of UNKNOWN. */
  public static volatile boolean timeoutIsUnknown = true;

  /** C29-15 off: NOT_FOUND fails the order without closing it at the channel first. */
  public static volatile boolean closeBeforeFail = true;

  /** C29-16 off: a success notice writes PAID whatever the order's current status. */
  public static volatile boolean transitionPrecondition = true;

  /** C29-17 off: PAID is written even when confirming the reservation did not take effect. */
  public static volatile boolean confirmMustTakeEffect = true;

  public static void restore() {
    timeoutIsUnknown = true;
    closeBeforeFail = true;
    transitionPrecondition = true;
    confirmMustTakeEffect = true;
  }
}
