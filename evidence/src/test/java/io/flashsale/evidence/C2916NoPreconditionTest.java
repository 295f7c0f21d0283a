package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-16 (negative control): with the transition precondition switched off, a late CHARGED
 * notice writes PAID over a REFUNDED order. Reconciliation finds PAID_BUT_REFUNDED,
 * confirmed ≠ paid and channel_net ≠ paid_sum.
 */
class C2916NoPreconditionTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final NegativeControl restore = new NegativeControl(stack);
  @RegisterExtension static final Evidence ev = new Evidence("C29-16", "negative control: no transition precondition");

  @Test
  void noPreconditionIsCaught() throws Exception {
    stack.sku("sku-c2916", 5, 3);
    HttpJson a = stack.api.login("t1", "user-1601");
    String id = Buyers.create(a, "c2916", "sku-c2916", 1).text("order_id");
    ev.equal("CANCELLED", Buyers.cancel(a, id).text("outcome"), "order cancelled");
    // a charge reaches the channel after the cancel (e.g. from a stale client): compensated by a refund
    stack.channel.post("/charge", Map.of("merchant_order", id, "amount", 1990,
        "notify_url", "http://127.0.0.1:" + stack.wiring.apiPort() + "/callbacks/payment"));
    stack.awaitStatus(id, "REFUNDED", 20_000);
    ev.note("timeline " + id + ": " + stack.sql.timeline(id));
    ev.check(stack.reconcileSummary().contains(" mismatches=0 "), "clean before the switch");

    stack.wiring.safeguards().switchOff(Safeguards.Safeguard.TRANSITION_PRECONDITION);
    String txn = stack.channel.get("/charges/" + id).text("txn");
    stack.callback(Map.of("notify_id", "ntf-late-c2916", "merchant_order", id,
        "kind", "CHARGED", "amount", 1990, "txn", txn == null ? "txn-x" : txn));
    stack.awaitStatus(id, "PAID", 10_000);
    stack.wiring.safeguards().restore();
    ev.note("timeline " + id + ": " + stack.sql.timeline(id));

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("mismatch " + id + " PAID PAID_BUT_REFUNDED"), "caught: PAID_BUT_REFUNDED");
    ev.check(report.contains("GLOBAL confirmed=0 != paid=1"), "caught: confirmed=0 != paid=1");
    ev.check(report.contains("GLOBAL channel_net=0 != paid_sum=1990"), "caught: channel_net=0 != paid_sum=1990");
  }
}
