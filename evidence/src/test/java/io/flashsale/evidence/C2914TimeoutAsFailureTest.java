package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-14 (negative control): with the safeguard "a timeout is UNKNOWN, not a failure" switched
 * off, a charge whose reply was lost fails the order and releases its unit; another buyer gets
 * it. Reconciliation catches the money kept for a FAILED order (CHARGED_BUT_FAILED,
 * channel_net ≠ paid_sum). With the safeguard back on, the held success notice compensates.
 */
class C2914TimeoutAsFailureTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline();
  @RegisterExtension static final NegativeControl restore = new NegativeControl(stack);
  @RegisterExtension static final Evidence ev = new Evidence("C29-14", "negative control: timeout treated as failure");

  @Test
  void timeoutAsFailureIsCaught() throws Exception {
    stack.sku("sku-c2914", 1, 3);
    HttpJson a = stack.api.login("t1", "user-1401");
    HttpJson b = stack.api.login("t1", "user-1402");
    String first = Buyers.create(a, "c2914-a", "sku-c2914", 1).text("order_id");
    Buyers.fault(stack.channel, first, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    stack.wiring.safeguards().switchOff(Safeguards.Safeguard.TIMEOUT_IS_UNKNOWN);
    ev.equal("FAILED", Buyers.pay(a, first).text("status"), "switch off: the lost reply fails the order");
    stack.wiring.safeguards().restore();
    // the unit is back in the database with the FAILED answer; the API's stock view hears of it a
    // moment later (LISTEN), so a create refused SOLD_OUT before then is sent again, as a buyer would
    HttpJson.Reply created = Buyers.create(b, "c2914-b", "sku-c2914", 1);
    int soldOut = 0;
    for (long until = System.currentTimeMillis() + 10_000;
        created.status() == 409 && "SOLD_OUT".equals(created.text("outcome")) && System.currentTimeMillis() < until; ) {
      soldOut++;
      Thread.sleep(100);
      created = Buyers.create(b, "c2914-b", "sku-c2914", 1);
    }
    ev.note("the other buyer's create: " + created.status() + " after " + soldOut + " SOLD_OUT answers");
    String second = created.text("order_id");
    ev.equal("PAID", Buyers.pay(b, second).text("status"), "another buyer gets the released unit");

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("mismatch " + first + " FAILED CHARGED_BUT_FAILED charged=1990 refunded=0 reservation=RELEASED"),
        "caught: " + first + " CHARGED_BUT_FAILED");
    ev.check(report.contains("GLOBAL channel_net=3980 != paid_sum=1990"), "caught: channel_net 3980 != paid_sum 1990");

    // safeguard back on: the late success notice of a FAILED order is compensated by a refund
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", first, "order", "fifo"));
    stack.awaitStatus(first, "REFUNDED", 20_000);
    ev.note("compensation " + first + ": " + stack.sql.timeline(first));
    String after = stack.checkReconcileClean(ev, "after the refund: reconcile clean");
  }
}
