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
   * How long the channel stub holds the charge request before it takes effect, counted from when
   * the request reaches the stub. With the close switched off the order fails on the first
   * query's NOT_FOUND, ~2 s after pay on an idle machine (1 s charge deadline, then the query
   * 1 s after UNKNOWN), so the workflow may run 4.5 s late before the request could land first
   * (the query would then find CHARGED and the control would show nothing): far more than a
   * loaded 2-core machine delays a timer and an activity. The test checks that FAILED came before
   * the request could land, and waits for the charge at the channel rather than for a fixed time.
   */
  private static final int HOLD_MS = 6_000;

  // the charge must time out (a request held at the channel): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline();
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
    stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, id) == 1, 5_000, "the charge request never reached the channel");
    long arrivedBy = System.currentTimeMillis();
    stack.awaitStatus(id, "FAILED", 10_000);
    long failedAt = System.currentTimeMillis();
    ev.note("request at the stub by +" + (arrivedBy - sent) + " ms, FAILED by +" + (failedAt - sent)
        + " ms, the held request lands at +" + HOLD_MS + " ms or later: margin " + (sent + HOLD_MS - failedAt) + " ms");
    ev.check(failedAt < sent + HOLD_MS, "switch off: FAILED on NOT_FOUND before the held request could land");
    ev.note("timeline " + id + ": " + stack.sql.timeline(id));
    // it lands: nothing refuses it
    stack.awaitTrue(() -> "CHARGED".equals(stack.channel.get("/charges/" + id).text("status")),
        arrivedBy + HOLD_MS + 5_000 - System.currentTimeMillis(), "the held request did not charge");
    stack.wiring.safeguards().restore();
    ev.equal("CHARGED", stack.channel.get("/charges/" + id).text("status"), "the late request charged at the channel");

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("mismatch " + id + " FAILED CHARGED_BUT_FAILED charged=1990"), "caught: CHARGED_BUT_FAILED");
    ev.check(report.contains("GLOBAL channel_net=1990 != paid_sum=0"), "caught: channel_net 1990 != paid_sum 0");
  }
}
