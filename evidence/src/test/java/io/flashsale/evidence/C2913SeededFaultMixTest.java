package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-13: the seed's 24-order fault mix, drawn with seed 29: 3 declined, 4 replies lost, 3
 * requests held, 3 never paid, 6 expiring while UNKNOWN (2 of them with a first refund reply
 * lost), 5 normal; every callback sent 1–3 times with 0–300 ms delay. The 12 buyers who found it
 * sold out come back with new keys while the orders converge. Outcome counts are scheduling and
 * printed; the last reconcile line must be clean.
 */
// skips the clock past long timers (60 s and more): time skipping exists only in the in-memory engine
@org.junit.jupiter.api.Tag("in-memory-only")
class C2913SeededFaultMixTest {
  @RegisterExtension static final Stack stack = new Stack().with("orders.unknownFirstQueryMs", 90_000);
  @RegisterExtension static final Evidence ev = new Evidence("C29-13", "24-order seeded fault mix with late buyers");

  private static final String SKU = "sku-c2913";
  private static final int STOCK = 24;

  @Test
  void seededFaultMixConverges() throws Exception {
    stack.sku(SKU, STOCK, 3);
    Random rnd = new Random(29);
    List<String> plan = new ArrayList<>();
    add(plan, "DECLINE", 3);
    add(plan, "REPLY_LOST", 4);
    add(plan, "HELD", 3);
    add(plan, "NO_PAY", 3);
    add(plan, "EXPIRE_UNKNOWN", 4);
    add(plan, "EXPIRE_UNKNOWN_REFUND_SLOW", 2);
    add(plan, "NORMAL", 5);
    Collections.shuffle(plan, rnd);

    ExecutorService pool = Executors.newFixedThreadPool(40);
    List<HttpJson> buyers = new ArrayList<>();
    for (int i = 0; i < 36; i++) buyers.add(stack.api.login("t1", String.format("user-13%02d", i)));
    List<String> orders = new ArrayList<>();
    for (int i = 0; i < STOCK; i++) orders.add(Buyers.create(buyers.get(i), "c2913-" + i, SKU, 1).text("order_id"));
    int soldOut = 0;
    for (int i = STOCK; i < 36; i++) {
      soldOut += "SOLD_OUT".equals(Buyers.create(buyers.get(i), "c2913-" + i, SKU, 1).text("outcome")) ? 1 : 0;
    }
    ev.equal(12, soldOut, "the 12 buyers after the 24th find it sold out");

    Map<String, String> faultOf = new LinkedHashMap<>();
    List<Future<String>> pays = new ArrayList<>();
    for (int i = 0; i < STOCK; i++) {
      String id = orders.get(i);
      String fault = plan.get(i);
      faultOf.put(id, fault);
      Map<String, Object> rule = new LinkedHashMap<>();
      rule.put("callback_copies", 1 + rnd.nextInt(3));
      rule.put("callback_delay_ms", rnd.nextInt(301));
      switch (fault) {
        case "DECLINE" -> rule.put("decline", true);
        case "REPLY_LOST" -> rule.put("reply_delay_ms", 1200);
        case "HELD" -> rule.put("hold_request_ms", rnd.nextBoolean() ? 800 : 10_000);
        case "EXPIRE_UNKNOWN" -> {
          rule.put("reply_delay_ms", 1200);
          rule.put("hold_callbacks", true);
        }
        case "EXPIRE_UNKNOWN_REFUND_SLOW" -> {
          rule.put("reply_delay_ms", 1200);
          rule.put("hold_callbacks", true);
          rule.put("first_refund_reply_delay_ms", 1000);
        }
        default -> { }
      }
      Buyers.fault(stack.channel, id, rule);
      if (!fault.equals("NO_PAY")) {
        HttpJson buyer = buyers.get(i);
        pays.add(pool.submit(() -> Buyers.pay(buyer, id).text("status")));
      }
    }
    Map<String, Integer> payAnswers = new TreeMap<>();
    for (Future<String> f : pays) payAnswers.merge(f.get(), 1, Integer::sum);
    ev.note("plan " + new TreeMap<>(histogram(plan)));
    ev.note("pay answers " + payAnswers);
    Thread.sleep(2_000); // lost replies' callbacks and short holds land in real time

    stack.skip(Duration.ofSeconds(61)); // reservation TTL: unpaid orders cancel, UNKNOWN ones release
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'CREATED'", SKU) == 0,
        15_000, "unpaid orders not cancelled");

    // late buyers come back with new keys while the workflows converge (query at 90 s, callbacks released)
    List<Future<String>> late = new ArrayList<>();
    for (int i = STOCK; i < 36; i++) {
      HttpJson buyer = buyers.get(i);
      int n = i;
      late.add(pool.submit(() -> {
        HttpJson.Reply r = Buyers.create(buyer, "c2913-late-" + n, SKU, 1);
        return r.status() == 201 ? Buyers.pay(buyer, r.text("order_id")).text("status") : r.text("outcome");
      }));
    }
    Future<?> clock = pool.submit(() -> stack.skip(Duration.ofSeconds(30)));
    List<String> held = new ArrayList<>();
    faultOf.forEach((id, f) -> {
      if (f.startsWith("EXPIRE_UNKNOWN")) held.add(id);
    });
    Collections.shuffle(held, rnd);
    List<Future<?>> releases = new ArrayList<>();
    for (String id : held) {
      releases.add(pool.submit(() -> stack.channel.post("/_callbacks/release",
          Map.of("merchant_order", id, "order", rnd.nextBoolean() ? "fifo" : "reverse"))));
    }
    Map<String, Integer> lateAnswers = new TreeMap<>();
    for (Future<String> f : late) lateAnswers.merge(String.valueOf(f.get()), 1, Integer::sum);
    clock.get();
    for (Future<?> f : releases) f.get();
    ev.note("late buyers " + lateAnswers);

    stack.awaitNothingPending(60_000);
    Thread.sleep(1_500); // callback copies still in flight (delayed up to 300 ms, retried)
    stack.channel.post("/_callbacks/release", Map.of("order", "fifo")); // nothing addressed; harmless
    for (String id : held) stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
    stack.awaitNoticesApplied(1, 20_000);
    pool.shutdown();

    Map<String, Integer> byFault = new TreeMap<>();
    faultOf.forEach((id, f) -> byFault.merge(f + "→" + stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id),
        1, Integer::sum));
    ev.note("outcome by fault " + byFault);
    Map<String, Integer> finals = stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", SKU);
    ev.note("final " + finals);
    ev.note("notification effects " + stack.sql.histogram(
        "SELECT split_part(effect, ' ', 1) FROM payment_notification"));
    int paid = finals.getOrDefault("PAID", 0);
    ev.check(paid <= STOCK, "PAID (" + paid + ") <= stock");
    ev.equal(0, finals.getOrDefault("CREATED", 0) + finals.getOrDefault("PAYING", 0)
        + finals.getOrDefault("UNKNOWN", 0) + finals.getOrDefault("REFUNDING", 0), "every order reached a final state");
    for (String id : orders) ev.check(stack.refundRows(id) <= 1, id + " at most one refund");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM (SELECT order_id FROM outbox GROUP BY order_id, event_type"
        + " HAVING count(*) > 1) d"), "no order has a terminal event twice");
    String summary = stack.checkReconcileClean(ev, "reconcile: mismatches=0 pending=0 drift=0");
    ev.check(summary.contains("channel_net=" + 1990L * paid + " paid_sum=" + 1990L * paid), "channel_net = paid_sum");
    ev.check(summary.contains("confirmed=" + paid + " paid=" + paid), "confirmed = paid");
  }

  private static void add(List<String> plan, String fault, int n) {
    for (int i = 0; i < n; i++) plan.add(fault);
  }

  private static Map<String, Integer> histogram(List<String> values) {
    Map<String, Integer> out = new TreeMap<>();
    for (String v : values) out.merge(v, 1, Integer::sum);
    return out;
  }
}
