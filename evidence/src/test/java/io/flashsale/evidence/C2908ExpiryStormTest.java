package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-08: 20 UNKNOWN orders whose reservations all expired (time-skipped), then at once: their
 * 20 success callbacks and 10 new buyers creating and paying. Who wins a unit is scheduling
 * (printed); the invariants are asserted: PAID never exceeds the stock and reconciliation is
 * clean once everything converged.
 */
// skips the clock past long timers (60 s and more): time skipping exists only in the in-memory engine
@org.junit.jupiter.api.Tag("in-memory-only")
class C2908ExpiryStormTest {
  @RegisterExtension static final Stack stack = new Stack().with("orders.unknownFirstQueryMs", 300_000);
  @RegisterExtension static final Evidence ev = new Evidence("C29-08", "20 expired UNKNOWN + 20 callbacks + 10 new buyers");

  private static final String SKU = "sku-c2908";
  private static final int STOCK = 20;

  @Test
  void expiredUnknownOrdersRaceNewBuyers() throws Exception {
    stack.sku(SKU, STOCK, 3);
    ExecutorService pool = Executors.newFixedThreadPool(32);
    List<String> originals = new ArrayList<>();
    List<Future<String>> started = new ArrayList<>();
    for (int i = 0; i < STOCK; i++) {
      int n = i;
      started.add(pool.submit(() -> {
        HttpJson buyer = stack.api.login("t1", String.format("user-08%02d", n));
        String id = Buyers.create(buyer, "c2908-" + n, SKU, 1).text("order_id");
        Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", 1200, "hold_callbacks", true));
        return id + " " + Buyers.pay(buyer, id).text("status");
      }));
    }
    for (Future<String> f : started) {
      String[] r = f.get().split(" ");
      originals.add(r[0]);
      ev.equal("UNKNOWN", r[1], r[0] + " UNKNOWN");
    }
    stack.skip(Duration.ofSeconds(61));
    stack.awaitTrue(() -> stack.sql.remaining(SKU) == STOCK, 20_000, "expired reservations not all released");
    ev.note("all " + STOCK + " reservations released by expiry; orders still " +
        stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", SKU));

    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> storm = new ArrayList<>();
    for (String id : originals) {
      storm.add(pool.submit(() -> {
        go.await();
        return stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
      }));
    }
    List<Future<String>> newcomers = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      int n = i;
      newcomers.add(pool.submit(() -> {
        HttpJson buyer = stack.api.login("t1", String.format("user-08n%02d", n));
        go.await();
        HttpJson.Reply r = Buyers.create(buyer, "c2908-new-" + n, SKU, 1);
        if (r.status() != 201) return r.text("outcome");
        return Buyers.pay(buyer, r.text("order_id")).text("status");
      }));
    }
    go.countDown();
    for (Future<?> f : storm) f.get();
    Map<String, Integer> late = new java.util.TreeMap<>();
    for (Future<String> f : newcomers) late.merge(String.valueOf(f.get()), 1, Integer::sum);
    pool.shutdown();
    ev.note("new buyers " + late);

    stack.awaitNothingPending(30_000);
    stack.awaitNoticesApplied(STOCK, 15_000);
    ev.note("CHARGED callback effects on the SKU (originals and new buyers) " + stack.sql.histogram(
        "SELECT n.effect FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
            + " WHERE o.sku = ? AND n.kind = 'CHARGED'", SKU));
    Map<String, Integer> finals = stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", SKU);
    ev.note("final " + finals);
    int paid = finals.getOrDefault("PAID", 0);
    ev.check(paid <= STOCK, "PAID (" + paid + ") <= stock (" + STOCK + ")");
    ev.equal(STOCK - paid, stack.sql.remaining(SKU), "remaining = stock − PAID");
    for (String id : originals) {
      String s = stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id);
      ev.check(s.equals("PAID") || s.equals("REFUNDED"), id + " ends PAID or REFUNDED (" + s + ")");
      ev.check(stack.refundRows(id) <= 1, id + " has at most one refund");
    }
    String summary = stack.checkReconcileClean(ev, "reconcile clean");
  }
}
