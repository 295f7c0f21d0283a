package io.flashsale.tools.bench;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * B2, end to end: create → pay → the channel's callback → PAID, C clients; the window ends when
 * every order has ended (PAID, or FAILED when the channel never took its charge) and every PAID
 * order's callback was applied.
 */
final class B2Scenario {
  private static final String CREATE_ = "CREATE_";
  private static final String PAY_ = "PAY_";

  private final LoadContext ctx;

  B2Scenario(LoadContext ctx) {
    this.ctx = ctx;
  }

  ScenarioResult run(int run, int orders, int stock, int clients, Duration max) throws Exception {
    ctx.login();
    String sku = ctx.newSku("b2-" + run, stock);
    ctx.mark(Load.MARK_START);
    Map<String, String> payAnswers = new java.util.concurrent.ConcurrentHashMap<>(); // order id -> its pay's answer
    ClosedLoop.Batch b = ClosedLoop.run(clients, orders, max, i -> {
      HttpJson buyer = ctx.buyer(i);
      HttpJson.Reply c;
      try {
        // a 503 is sent again with its key, as a buyer does (Answers): the order its first attempt made is REPLAY
        c = buyer.postUntilAnswered("/orders", Map.of("request_key", sku + "-" + i, "sku", sku, "quantity", 1),
            Answers.RETRY_FOR);
      } catch (RuntimeException e) { // no answer: this order is not paid, and counted
        return new Timed(CREATE_ + ClosedLoop.failure(e), 0);
      }
      String created = c.text("outcome");
      if (!"CREATED".equals(created) && !"REPLAY".equals(created)) {
        return new Timed(CREATE_ + LoadContext.outcome(c, "outcome"), 0);
      }
      String id = c.text("order_id");
      Timed pay = ClosedLoop.timed(() -> LoadContext.outcome(buyer.post("/orders/" + id + "/pay", null), "status"));
      // a pay call without an answer is no PAID order the window waits for (it may still become PAID)
      if (ClosedLoop.noAnswer(pay.outcome())) return new Timed(PAY_ + pay.outcome(), pay.nanos());
      payAnswers.put(id, pay.outcome());
      return pay;
    });
    // each order whose pay call answered must end: PAID when its pay answered PAID, else PAID or
    // FAILED (the channel never took its charge: a charge call that timed out before the channel
    // recorded it, queried as UNKNOWN); reconcile after the run holds the money side
    long t0 = System.nanoTime() - (long) (b.seconds() * 1e9);
    Map<String, String> status = ctx.awaitUntil(() -> ctx.statuses(sku), s -> Invariants.unended(payAnswers, s) == 0);
    long paid = Invariants.endedAs("PAID", payAnswers, status);
    long failed = Invariants.endedAs("FAILED", payAnswers, status);
    // the window closes when the channel's callbacks were applied too (as duplicates of the pay answer)
    long callbacks = ctx.awaitCount("SELECT count(*) FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
        + " WHERE o.sku = ? AND n.effect IS NOT NULL", paid, sku);
    double seconds = (System.nanoTime() - t0) / 1e9;
    ctx.mark(Load.MARK_END);
    List<String> broken = new ArrayList<>(Invariants.everyPaidCallEnded(payAnswers, status, LoadContext.CONVERGE));
    broken.addAll(Invariants.paidOrders(ctx, sku).broken(false));
    broken.addAll(Invariants.stock(ctx, sku).broken());
    List<Long> pay = new ArrayList<>();
    for (Timed t : b.results()) if (answeredPay(t.outcome())) pay.add(t.nanos());
    Collections.sort(pay);
    Map<String, Double> m = new LinkedHashMap<>();
    m.put("paid", (double) paid);
    m.put("callbacks applied", (double) callbacks);
    m.put("failed, never charged", (double) failed);
    return new ScenarioResult("b2", run, clients, b.results().size(), seconds, paid / seconds, "PAID orders/s",
        Stats.pct(pay, 50), Stats.pct(pay, 99), Stats.outcomes(b.results()), m, broken, "",
        List.of("latency = the pay call; stock " + stock));
  }

  /** A b2 outcome of a pay call that answered (not a create that failed, not a pay without an answer). */
  private static boolean answeredPay(String outcome) {
    return !outcome.startsWith(CREATE_) && !outcome.startsWith(PAY_);
  }
}
