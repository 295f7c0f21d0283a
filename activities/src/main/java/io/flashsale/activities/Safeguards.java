package io.flashsale.activities;

/**
 * Test-only switches for the negative controls (C29-14..17): each turns ONE safeguard off so an
 * experiment can show that reconciliation catches the damage. They are plain static fields set
 * by test code; no configuration key or command line reaches them.
 */
public final class Safeguards {
  private Safeguards() {}

  /** Default: every safeguard on. */
  public static void restore() {}
}
