package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-19 (negative control, in-process form): a dual write without outbox — the order commits
 * PAID but its event is never written (here: the PAID commit is made by a direct status write
 * that skips the outbox, standing in for a process killed between "commit" and "notify"). The
 * three-way reconciliation cannot see it (channel, order and reservation agree); the
 * event-integrity check does.
 */
class C2919EventIntegrityTest {
  @RegisterExtension static final Stack stack = new Stack().with("relay.enabled", false);
  @RegisterExtension static final Evidence ev = new Evidence("C29-19", "negative control: dual write without outbox");

  @Test
  void paidWithoutEventIsCaught() throws Exception {
    stack.sku("sku-c2919", 5, 3);
    HttpJson a = stack.api.login("t1", "user-1901");
    String id = Buyers.create(a, "c2919", "sku-c2919", 1).text("order_id");
    ev.equal("PAID", Buyers.pay(a, id).text("status"), "order PAID through the normal path");
    stack.awaitNoticesApplied(1, 10_000);
    ev.check(stack.reconcileSummary().contains(" mismatches=0 "), "clean with the outbox");

    // the dual-write variant: the same PAID commit, the event never written
    stack.db().read(c -> c.createStatement().executeUpdate("DELETE FROM outbox WHERE order_id = '" + id + "'"));
    String report = stack.reconcile();
    ev.note("report:\n" + report.trim());
    String summary = report.trim().lines().reduce((x, y) -> y).orElse("");
    ev.check(summary.contains("channel_net=1990 paid_sum=1990 confirmed=1 paid=1 drift=0"),
        "channel, orders and reservations still agree");
    ev.check(report.contains("GLOBAL PAID orders without ORDER_PAID outbox event: 1"), "caught: PAID without ORDER_PAID event");
    ev.check(report.contains("mismatch " + id + " PAID PAID_WITHOUT_EVENT"), "caught per order: PAID_WITHOUT_EVENT");
  }
}
