package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-17 (negative control): with "PAID only if the confirm took effect" switched off, ten
 * orders whose units expired and were sold to ten new buyers still become PAID when their
 * success notices arrive: 20 PAID for 10 units. Reconciliation finds confirmed=10 != paid=20.
 */
// skips the clock past long timers (60 s and more): time skipping exists only in the in-memory engine
@org.junit.jupiter.api.Tag("in-memory-only")
class C2917ConfirmIgnoredTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "5m");
  @RegisterExtension static final NegativeControl restore = new NegativeControl(stack);
  @RegisterExtension static final Evidence ev = new Evidence("C29-17", "negative control: confirm result ignored");

  private static final String SKU = "sku-c2917";

  @Test
  void ignoredConfirmIsCaught() throws Exception {
    stack.sku(SKU, 10, 3);
    List<String> originals = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      HttpJson buyer = stack.api.login("t1", String.format("user-17%02d", i));
      String id = Buyers.create(buyer, "c2917-" + i, SKU, 1).text("order_id");
      Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
      Buyers.pay(buyer, id);
      originals.add(id);
    }
    stack.skip(Duration.ofSeconds(61));
    stack.awaitTrue(() -> stack.sql.remaining(SKU) == 10, 15_000, "expired units not released");
    for (int i = 0; i < 10; i++) {
      HttpJson buyer = stack.api.login("t1", String.format("user-17n%02d", i));
      String id = Buyers.create(buyer, "c2917-new-" + i, SKU, 1).text("order_id");
      ev.equal("PAID", Buyers.pay(buyer, id).text("status"), "new buyer " + i + " PAID");
    }
    stack.wiring.safeguards().switchOff(Safeguards.Safeguard.CONFIRM_MUST_TAKE_EFFECT);
    for (String id : originals) stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", SKU) == 20,
        20_000, "originals not all PAID");
    stack.wiring.safeguards().restore();

    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    ev.check(report.contains("GLOBAL confirmed=10 != paid=20"), "caught: oversell, confirmed=10 != paid=20");
    ev.equal(10L, NegativeControl.linesWith(report, "PAID_WITHOUT_CONFIRMED_RESERVATION"),
        "caught: 10 PAID orders without a confirmed reservation");
  }
}
