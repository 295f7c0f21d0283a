package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.ArrayList;
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
 * C29-08: 20 UNKNOWN orders hold the whole stock; their reservations expire while their 20
 * success callbacks and 10 new buyers arrive. The orders are created 150 ms apart, so their
 * 60 s expiries fall 150 ms apart too; the clock is skipped to 1.5 s before the first one and
 * then runs in real time. Each original's callback is released a seeded 200–800 ms after its
 * own expiry, while later orders' expiries are still to come, and the new buyers retry their
 * create every 100 ms until they get a unit. Expiry releases, callbacks and creates therefore
 * interleave: the record shows their database timestamps, and at least one callback or create
 * must land between the first and the last expiry release. Who wins a unit is scheduling (printed); the invariants are asserted: PAID
 * never exceeds the stock, every original ends PAID or REFUNDED with at most one refund, and
 * reconciliation is clean once everything converged.
 */
// skips the clock to just before the 60 s reservation TTL: time skipping exists only in the in-memory engine
@org.junit.jupiter.api.Tag("in-memory-only")
class C2908ExpiryStormTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "5m");
  @RegisterExtension static final Evidence ev = new Evidence("C29-08", "20 expired UNKNOWN + 20 callbacks + 10 new buyers");

  private static final String SKU = "sku-c2908";
  private static final int STOCK = 20;
  private static final long TTL_MS = 60_000;
  /** Between two creates, and between two released callbacks. */
  private static final long SPACING_MS = 150;
  /** Real time left before the first expiry when the storm starts. */
  private static final long LEAD_MS = 1_500;

  @Test
  void expiriesRaceCallbacksAndNewBuyers() throws Exception {
    stack.sku(SKU, STOCK, 3);
    ExecutorService pool = Executors.newFixedThreadPool(32);
    List<HttpJson> originalBuyers = new ArrayList<>();
    for (int i = 0; i < STOCK; i++) originalBuyers.add(stack.api.login("t1", String.format("user-08%02d", i)));
    List<HttpJson> newBuyers = new ArrayList<>();
    for (int i = 0; i < 10; i++) newBuyers.add(stack.api.login("t1", String.format("user-08n%02d", i)));

    List<Future<String>> started = new ArrayList<>();
    for (int i = 0; i < STOCK; i++) {
      long next = System.currentTimeMillis() + SPACING_MS; // spreads the creates, and so the expiries
      HttpJson buyer = originalBuyers.get(i);
      String id = Buyers.create(buyer, "c2908-" + i, SKU, 1).text("order_id");
      started.add(pool.submit(() -> {
        Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
        return id + " " + Buyers.pay(buyer, id).text("status");
      }));
      Thread.sleep(Math.max(0, next - System.currentTimeMillis()));
    }
    List<String> originals = new ArrayList<>();
    for (Future<String> f : started) {
      String[] r = f.get().split(" ");
      originals.add(r[0]);
      ev.equal("UNKNOWN", r[1], r[0] + " UNKNOWN");
    }
    ev.equal(0, stack.sql.remaining(SKU), "the 20 UNKNOWN orders hold the whole stock");

    // the workflow's expiry timer is due TTL after the create; the engine's clock runs with the real
    // one until skipped, so skipping to LEAD_MS before the first create's expiry leaves them all ahead
    long firstCreate = epochMs("SELECT min(t.at) FROM order_transition t JOIN orders o USING (order_id)"
        + " WHERE o.sku = ? AND t.to_status = 'CREATED'");
    long lastCreate = epochMs("SELECT max(t.at) FROM order_transition t JOIN orders o USING (order_id)"
        + " WHERE o.sku = ? AND t.to_status = 'CREATED'");
    long skipMs = firstCreate + TTL_MS - LEAD_MS - System.currentTimeMillis();
    stack.skip(Duration.ofMillis(skipMs));
    long stormStart = System.currentTimeMillis();
    long expiriesEnd = stormStart + LEAD_MS + (lastCreate - firstCreate);
    // the engine's clock is now skipMs ahead of the real one: an expiry due at create + TTL on it
    // comes at create + TTL - skipMs in real time
    ev.note("creates spread over " + (lastCreate - firstCreate) + " ms; clock skipped " + skipMs
        + " ms; expiries due from +" + LEAD_MS + " to +" + (expiriesEnd - stormStart) + " ms after the storm starts");

    // each original's callback is released a seeded 200–800 ms after its own expiry is due, so it
    // finds the unit released, while the next orders' expiries are still coming
    Map<String, Long> createdAt = new java.util.HashMap<>();
    for (String id : originals) {
      createdAt.put(id, stack.sql.count("SELECT (extract(epoch FROM at) * 1000)::bigint FROM order_transition"
          + " WHERE order_id = ? AND to_status = 'CREATED'", id));
    }
    Random rnd = new Random(8);
    List<long[]> schedule = new ArrayList<>(); // {due in real time, index}
    for (int i = 0; i < originals.size(); i++) {
      long due = createdAt.get(originals.get(i)) + TTL_MS - skipMs + 200 + rnd.nextInt(601);
      schedule.add(new long[] {due, i});
    }
    schedule.sort(java.util.Comparator.comparingLong(a -> a[0]));
    List<String> plan = new ArrayList<>();
    for (long[] e : schedule) plan.add(originals.get((int) e[1]) + "@+" + (e[0] - stormStart));
    ev.note("callbacks released at (ms after the storm starts) " + plan);
    Future<?> callbacks = pool.submit(() -> {
      for (long[] e : schedule) {
        Thread.sleep(Math.max(0, e[0] - System.currentTimeMillis()));
        stack.channel.post("/_callbacks/release", Map.of("merchant_order", originals.get((int) e[1]), "order", "fifo"));
      }
      return null;
    });
    long buyersUntil = expiriesEnd + 2_500;
    List<Future<String>> newcomers = new ArrayList<>();
    for (int i = 0; i < newBuyers.size(); i++) {
      HttpJson buyer = newBuyers.get(i);
      int n = i;
      newcomers.add(pool.submit(() -> {
        String last = "none";
        int attempts = 0;
        while (System.currentTimeMillis() < buyersUntil) {
          attempts++;
          HttpJson.Reply r = Buyers.create(buyer, "c2908-new-" + n, SKU, 1);
          if (r.status() == 201) return Buyers.pay(buyer, r.text("order_id")).text("status") + " after " + attempts;
          last = r.text("outcome");
          Thread.sleep(100);
        }
        return last;
      }));
    }
    callbacks.get();
    Map<String, Integer> late = new TreeMap<>();
    for (Future<String> f : newcomers) late.merge(String.valueOf(f.get()).replaceAll(" after \\d+", ""), 1, Integer::sum);
    for (Future<String> f : newcomers) ev.note("new buyer: " + f.get());
    pool.shutdown();
    ev.note("new buyers " + late);

    stack.awaitNothingPending(30_000);
    stack.awaitNoticesApplied(STOCK, 15_000);

    List<String> events = timeline(originals);
    events.forEach(e -> ev.note("at " + e));
    List<Long> releases = times(events, "EXPIRY");
    ev.note(releases.size() + " of " + STOCK + " expiries released a unit (the others found their order PAID already)");
    ev.check(!releases.isEmpty(), "at least one expiry released a unit while its order was UNKNOWN");
    long firstRelease = releases.get(0);
    long lastRelease = releases.get(releases.size() - 1);
    long between = events.stream().filter(e -> !e.contains(" EXPIRY "))
        .mapToLong(e -> Long.parseLong(e.substring(1, e.indexOf(' '))))
        .filter(t -> t > firstRelease && t < lastRelease).count();
    ev.note(between + " callbacks and creates landed between the first and the last expiry release ("
        + (lastRelease - firstRelease) + " ms apart)");
    ev.check(between > 0, "expiry releases interleave with callbacks or new buyers' creates");

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

  private static long epochMs(String sql) {
    return stack.sql.count("SELECT (extract(epoch FROM (" + sql + ")) * 1000)::bigint", SKU);
  }

  /**
   * "+&lt;ms&gt; KIND order detail" lines in time order, ms from the first event: each original's
   * expiry release (its /r1 RELEASED), each original's first CHARGED callback applied, and each
   * new buyer's create, all by the database clock of the transaction that did it.
   */
  private static List<String> timeline(List<String> originals) {
    String in = "'" + String.join("','", originals) + "'";
    List<String> rows = stack.sql.column(
        "SELECT (extract(epoch FROM t) * 1000)::bigint || ' ' || what FROM ("
            + " (SELECT r.updated_at AS t, 'EXPIRY ' || o.order_id || ' released /r1' AS what FROM orders o"
            + "  JOIN reservation r ON r.reservation_key = o.order_id || '/r1'"
            + "  WHERE o.order_id IN (" + in + ") AND r.status = 'RELEASED')"
            + " UNION ALL"
            + " (SELECT DISTINCT ON (merchant_order) applied_at, 'CALLBACK ' || merchant_order || ' ' || effect"
            + "  FROM payment_notification WHERE merchant_order IN (" + in + ") AND kind = 'CHARGED'"
            + "  AND applied_at IS NOT NULL ORDER BY merchant_order, applied_at)"
            + " UNION ALL"
            + " (SELECT t.at, 'CREATE ' || o.order_id || ' new buyer' FROM orders o JOIN order_transition t USING (order_id)"
            + "  WHERE o.sku = ? AND o.order_id NOT IN (" + in + ") AND t.to_status = 'CREATED')) e (t, what) ORDER BY t",
        SKU);
    long zero = rows.isEmpty() ? 0 : Long.parseLong(rows.get(0).substring(0, rows.get(0).indexOf(' ')));
    List<String> out = new ArrayList<>();
    for (String r : rows) {
      int sp = r.indexOf(' ');
      out.add("+" + (Long.parseLong(r.substring(0, sp)) - zero) + " " + r.substring(sp + 1));
    }
    return out;
  }

  private static List<Long> times(List<String> events, String kind) {
    List<Long> out = new ArrayList<>();
    for (String e : events) {
      if (e.contains(" " + kind + " ")) out.add(Long.parseLong(e.substring(1, e.indexOf(' '))));
    }
    return out;
  }
}
