package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Puts every safeguard back after a negative-control experiment, whatever happened in it. */
final class NegativeControl implements AfterAllCallback {
  @Override
  public void afterAll(ExtensionContext context) {
    Safeguards.restore();
  }

  /** The reconcile report's lines that name one of the flags. */
  static long linesWith(String report, String flag) {
    return report.lines().filter(l -> l.contains(flag)).count();
  }
}
