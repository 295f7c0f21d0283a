package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-05: the charge request is held in transit for 6 s. The order goes UNKNOWN at the short channel deadline (1 s);
 * the query 1 s later finds NOT_FOUND, which is not "not charged": the workflow closes first and
 * acts on the close (CLOSED → FAILED + release). The late request is refused at the channel and
 * never reaches the ledger; a later charge of the same order is refused too.
 */
@Tag("fast") // in ./flashsale test --fast
class C2905RequestHeldTest {
  /**
   * How long the channel stub holds the charge request before it takes effect, counted from when
   * the request reaches the stub. The close comes ~2 s after pay on an idle machine (1 s
   * charge deadline, then the first query 1 s after UNKNOWN, then the close), so the workflow may
   * run 4.5 s late before the request could land first: far more than a loaded 2-core machine
   * delays a timer and two activities. The test does not rely on it silently: it checks that
   * FAILED was reached before the request could land (a lost race fails with that message, not a
   * confusing timeline), and it waits for the landing from the moment the stub is seen holding
   * the request, so a slow delivery to the stub cannot make the "refused" checks run too early.
   */
  private static final int HOLD_MS = 6_000;

  // the charge must time out (a request held at the channel): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline();
  @RegisterExtension static final Evidence ev = new Evidence("C29-05", "request held → NOT_FOUND → close → FAILED");

  @Test
  void notFoundClosesBeforeFailing() throws Exception {
    stack.sku("sku-c2905", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-0042");
    String orderId = Buyers.create(buyer, "c2905", "sku-c2905", 1).text("order_id");
    Buyers.fault(stack.channel, orderId, Map.of("hold_request_ms", HOLD_MS));

    long sent = System.currentTimeMillis();
    ev.equal("UNKNOWN", Buyers.pay(buyer, orderId).text("status"), "pay answers UNKNOWN");
    // the request is at the stub by now, or soon: from then on it is held HOLD_MS
    stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, orderId) == 1, 5_000, "the charge request never reached the channel");
    long arrivedBy = System.currentTimeMillis();
    stack.awaitStatus(orderId, "FAILED", 10_000);
    long failedAt = System.currentTimeMillis();
    ev.note("request at the stub by +" + (arrivedBy - sent) + " ms, FAILED by +" + (failedAt - sent)
        + " ms, the held request lands at +" + HOLD_MS + " ms or later: margin " + (sent + HOLD_MS - failedAt) + " ms");
    ev.check(failedAt < sent + HOLD_MS, "the close and FAILED came before the held request could land");
    String timeline = stack.sql.timeline(orderId);
    ev.note("timeline " + orderId + ": " + timeline);
    ev.equal("[-->CREATED v1 create] [CREATED->PAYING v2 pay] [PAYING->UNKNOWN v3 charge timeout] [UNKNOWN->FAILED v4 close CLOSED]",
        timeline, "NOT_FOUND led to close, the close answer CLOSED to FAILED");
    ev.equal(5, stack.sql.remaining("sku-c2905"), "the unit is back");

    // let the held request land (HOLD_MS after it reached the stub): the channel must refuse it
    Thread.sleep(Math.max(0, arrivedBy + HOLD_MS + 500 - System.currentTimeMillis()));
    ev.equal("CLOSED", stack.channel.get("/charges/" + orderId).text("status"), "channel status stays CLOSED");
    ev.equal(0L, countLedgerRows(orderId), "the late charge never appears in the ledger");
    HttpJson.Reply again = stack.channel.post("/charge", Map.of("merchant_order", orderId, "amount", 1990,
        "notify_url", "http://127.0.0.1:" + stack.wiring.apiPort() + "/callbacks/payment"));
    ev.check(again.status() == 409 && "CLOSED".equals(again.text("result")), "a new charge of the order → 409 CLOSED");
    stack.recordHistory(orderId, "c2905-not-found-close-failed");
    String summary = stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static long countLedgerRows(String orderId) {
    long n = 0;
    for (var row : stack.channel.get("/statement").body().path("rows")) {
      if (orderId.equals(row.path("merchant_order").asText())) n++;
    }
    return n;
  }
}
