package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-15 (negative control): with "close before failing on NOT_FOUND" switched off, the order
 * fails on NOT_FOUND while its charge request is still in transit; the request lands and
 * charges. Reconciliation catches CHARGED_BUT_FAILED.
 */
class C2915NotFoundWithoutCloseTest {
  /**
   * How long the charge request is held in transit: the first query comes ~1.3 s after pay
   * (300 ms timeout + 1 s), so 6 s leaves seconds of margin on a loaded 2-core machine.
   */
  private static final int HOLD_MS = 6_000;

  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final NegativeControl restore = new NegativeControl(stack);
  @RegisterExtension static final Evidence ev = new Evidence("C29-15", "negative control: NOT_FOUND failed without close");

  @Test
  void notFoundWithoutCloseIsCaught() throws Exception {
    stack.sku("sku-c2915", 5, 3);
    HttpJson a = stack.api.login("t1", "user-1501");
    String id = Buyers.create(a, "c2915", "sku-c2915", 1).text("order_id");
    Buyers.fault(stack.channel, id, Map.of("hold_request_ms", HOLD_MS, "hold_callbacks", true));
    stack.wiring.safeguards().switchOff(Safeguards.Safeguard.CLOSE_BEFORE_FAIL);
    long sent = System.currentTimeMillis();
    ev.equal("UNKNOWN", Buyers.pay(a, id).text("status"), "pay answers UNKNOWN");
    stack.awaitStatus(id, "FAILED", 10_000);
    ev.note("timeline " + id + ": " + stack.sql.timeline(id));
    Thread.sleep(Math.max(0, sent + HOLD_MS + 300 - System.currentTimeMillis())); // it lands: nothing refuses it
    stack.wiring.safeguards().restore();
    ev.equal("CHARGED", stack.channel.get("/charges/" + id).text("status"), "the late request charged at the channel");

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("mismatch " + id + " FAILED CHARGED_BUT_FAILED charged=1990"), "caught: CHARGED_BUT_FAILED");
    ev.check(report.contains("GLOBAL channel_net=1990 != paid_sum=0"), "caught: channel_net 1990 != paid_sum 0");
  }
}
