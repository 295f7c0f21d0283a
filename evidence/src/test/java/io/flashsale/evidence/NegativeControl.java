package io.flashsale.evidence;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Puts every safeguard back after a negative-control experiment, whatever happened in it. */
final class NegativeControl implements AfterAllCallback {
  private final Stack stack;

  NegativeControl(Stack stack) {
    this.stack = stack;
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (stack.wiring != null) stack.wiring.safeguards().restore();
  }

  /** The reconcile report's lines that name one of the flags. */
  static long linesWith(String report, String flag) {
    return report.lines().filter(l -> l.contains(flag)).count();
  }
}
