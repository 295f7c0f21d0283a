package io.flashsale.evidence;

import io.flashsale.api.cli.HttpJson;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-02 and CAP-04: idempotency under races. Four concurrent creates with one key and one payload
 * meet in one workflow: one CREATED, three REPLAY of the same order, stock taken once (2 units).
 * Same key with other payloads: 422. A mixed race (same key, two payloads) never creates two
 * orders. Concurrent cancels of one order release its units once.
 */
class Cap02IdempotencyRaceTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("CAP-02", "idempotency races; concurrent cancels (CAP-04)");

  @Test
  void sameKeyRacesMeetInOneOrder() throws Exception {
    stack.sku("sku-cap02", 10, 10);
    HttpJson buyer = stack.api.login("t1", "user-cap02");
    List<HttpJson.Reply> same = race(4, i -> Buyers.create(buyer, "cap02-k1", "sku-cap02", 2));
    Map<String, Integer> outcomes = outcomes(same);
    ev.note("4 same-key creates " + outcomes);
    ev.equal(Map.of("201 CREATED", 1, "200 REPLAY", 3), outcomes, "1 CREATED + 3 REPLAY");
    ev.equal(1L, same.stream().map(r -> r.text("order_id")).distinct().count(), "all four name the same order");
    ev.equal(8, stack.sql.remaining("sku-cap02"), "stock taken once: 10 − 2");

    HttpJson.Reply other = Buyers.create(buyer, "cap02-k1", "sku-cap02", 1);
    ev.check(other.status() == 422 && "KEY_REUSED".equals(other.text("outcome")), "same key, other payload → 422");

    List<HttpJson.Reply> mixed = race(6, i -> Buyers.create(buyer, "cap02-k2", "sku-cap02", i % 2 == 0 ? 1 : 2));
    ev.note("mixed race on one key " + outcomes(mixed));
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM orders WHERE request_key = 'cap02-k2'"), "one order for the key");
    long created = mixed.stream().filter(r -> r.status() == 201).count();
    ev.equal(1L, created, "exactly one CREATED in the mixed race");
    ev.check(mixed.stream().allMatch(r -> r.status() == 201 || r.status() == 200 || r.status() == 422),
        "the others are REPLAY (same payload) or KEY_REUSED (other payload)");

    // CAP-04: concurrent cancels
    int before = stack.sql.remaining("sku-cap02");
    String id = same.get(0).text("order_id");
    List<HttpJson.Reply> cancels = race(5, i -> Buyers.cancel(buyer, id));
    Map<String, Integer> c = outcomes(cancels);
    ev.note("5 concurrent cancels " + c);
    ev.equal(Map.of("200 CANCELLED", 1, "200 REPLAY_CANCEL", 4), c, "1 CANCELLED + 4 REPLAY_CANCEL");
    ev.equal(before + 2, stack.sql.remaining("sku-cap02"), "units restored once (+2)");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private interface Call {
    HttpJson.Reply run(int i) throws Exception;
  }

  private static List<HttpJson.Reply> race(int n, Call call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<HttpJson.Reply>> fs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int k = i;
      fs.add(pool.submit(() -> {
        go.await();
        return call.run(k);
      }));
    }
    go.countDown();
    List<HttpJson.Reply> out = new ArrayList<>();
    for (Future<HttpJson.Reply> f : fs) out.add(f.get());
    pool.shutdown();
    return out;
  }

  private static Map<String, Integer> outcomes(List<HttpJson.Reply> replies) {
    Map<String, Integer> m = new TreeMap<>();
    for (HttpJson.Reply r : replies) m.merge(r.status() + " " + r.text("outcome"), 1, Integer::sum);
    return m;
  }
}
