package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-03: pay and cancel race on 10 orders. Each order ends PAID or CANCELLED, never both; the
 * channel saw exactly as many charges as there are PAID orders and knows nothing of the
 * cancelled ones. Which side wins is scheduling: printed, not asserted.
 */
@Tag("fast") // in ./flashsale test --fast
class C2903PayVersusCancelTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("C29-03", "pay vs cancel on 10 orders, charges = PAID");

  private static final String SKU = "sku-c2903";

  @Test
  void payAndCancelRace() throws Exception {
    stack.sku(SKU, 10, 3);
    List<HttpJson> buyers = new ArrayList<>();
    List<String> orders = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      HttpJson b = stack.api.login("t1", "user-03" + String.format("%02d", i));
      buyers.add(b);
      orders.add(Buyers.create(b, "c2903-" + i, SKU, 1).text("order_id"));
    }
    ExecutorService pool = Executors.newFixedThreadPool(20);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<HttpJson.Reply>> pays = new ArrayList<>();
    List<Future<HttpJson.Reply>> cancels = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      HttpJson b = buyers.get(i);
      String id = orders.get(i);
      pays.add(pool.submit(() -> {
        go.await();
        return Buyers.pay(b, id);
      }));
      cancels.add(pool.submit(() -> {
        go.await();
        return Buyers.cancel(b, id);
      }));
    }
    go.countDown();
    for (int i = 0; i < 10; i++) {
      HttpJson.Reply p = pays.get(i).get();
      HttpJson.Reply c = cancels.get(i).get();
      boolean payWon = p.status() == 200 && "PAID".equals(p.text("status"));
      boolean cancelWon = c.status() == 200 && "CANCELLED".equals(c.text("outcome"));
      ev.check(payWon ^ cancelWon, orders.get(i) + ": exactly one of pay / cancel took effect (pay " + p.status() + " "
          + p.text("status") + ", cancel " + c.status() + " " + c.text("outcome") + ")");
    }
    pool.shutdown();

    Map<String, Integer> finals = new TreeMap<>(stack.sql.histogram(
        "SELECT status FROM orders WHERE sku = ?", SKU));
    ev.note("final " + finals);
    int paid = finals.getOrDefault("PAID", 0);
    ev.equal(10, paid + finals.getOrDefault("CANCELLED", 0), "every order is PAID or CANCELLED");
    int charges = stack.channel.get("/stats").body().path("charge_requests").asInt();
    ev.note("charge requests at the channel " + charges);
    ev.equal(paid, charges, "charge requests = PAID orders");
    for (String id : orders) {
      String status = stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id);
      if ("CANCELLED".equals(status)) {
        ev.equal("NOT_FOUND", stack.channel.get("/charges/" + id).text("status"),
            id + " CANCELLED is unknown to the channel");
      }
    }
    ev.equal(10 - paid, stack.sql.remaining(SKU), "cancelled units are back on sale");
    stack.awaitNoticesApplied(paid, 15_000);
    String summary = stack.checkReconcileClean(ev, "reconcile clean");
  }
}
