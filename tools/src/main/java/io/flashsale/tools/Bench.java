package io.flashsale.tools;

import io.flashsale.launcher.cli.HttpJson;

import io.flashsale.activities.OrderActivitiesImpl;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.workflows.CreateOrder;
import io.flashsale.workflows.CreateResult;
import java.io.PrintStream;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * B1 admission storm (HTTP + Temporal, and the same admission straight over JDBC as a ceiling),
 * B2 create → pay → callback end to end, B3 a storm of duplicate callbacks. Each run on fresh
 * SKUs; the report gives every run and the medians. Invariants are checked and reported.
 */
final class Bench {
  private static final int SUBJECTS = 50;

  private final FlashsaleApplication.Wiring w;
  private final HttpJson api;
  private final HttpJson admin;
  private final HttpJson channel;
  private final PrintStream out;
  private final List<HttpJson> buyers = new ArrayList<>();
  private final StringBuilder report = new StringBuilder();

  Bench(FlashsaleApplication.Wiring w, String apiUrl, String adminUrl, PrintStream out) {
    this.w = w;
    this.api = new HttpJson(apiUrl, null);
    this.admin = new HttpJson(adminUrl, null);
    this.channel = new HttpJson(w.channelUrl(), null);
    this.out = out;
  }

  record Timed(int status, String outcome, long nanos) {}

  String run(int runs, int n, int units, int c, int e2e, int stormOrders, int copies) throws Exception {
    line("# flashsale bench " + java.time.Instant.now());
    line("machine: " + System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", "
        + Runtime.getRuntime().availableProcessors() + " cores, " + System.getProperty("java.vm.name") + " "
        + System.getProperty("java.version") + ", max heap " + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB");
    line("stack: embedded PostgreSQL + Temporal test server + channel stub + API, one JVM; client threads in the same JVM");
    line("params: runs=" + runs + " B1 buyers=" + n + " units=" + units + " concurrency=" + c + " | B2 orders=" + e2e
        + " | B3 orders=" + stormOrders + " copies=" + copies);
    for (int i = 0; i < SUBJECTS; i++) buyers.add(api.login("t1", String.format("bench-u%02d", i)));
    ExecutorService pool = Executors.newFixedThreadPool(c);
    Map<String, List<Double>> medians = new LinkedHashMap<>();
    try {
      // warm-up (JIT, pools, caches), not reported
      StringBuilder keep = new StringBuilder(report);
      b1(pool, 0, Math.min(n, 200), Math.min(units, 50), new LinkedHashMap<>());
      b2(pool, 0, Math.min(e2e, 20), new LinkedHashMap<>());
      report.setLength(0);
      report.append(keep).append("(warm-up run 0 not reported)\n");
      for (int r = 1; r <= runs; r++) b1(pool, r, n, units, medians);
      for (int r = 1; r <= runs; r++) b2(pool, r, e2e, medians);
      for (int r = 1; r <= runs; r++) b3(pool, r, stormOrders, copies, medians);
    } finally {
      pool.shutdown();
    }
    line("");
    line("medians over " + runs + " runs:");
    medians.forEach((k, v) -> line(medianLine(k, v)));
    return report.toString();
  }

  private void b1(ExecutorService pool, int r, int n, int units, Map<String, List<Double>> m) throws Exception {
    String sku = "bench-b1-" + r;
    sku(sku, units);
    List<Callable<Timed>> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      HttpJson b = buyers.get(i % SUBJECTS);
      Map<String, Object> body = Map.of("request_key", "b1-" + r + "-" + i, "sku", sku, "quantity", 1);
      calls.add(() -> {
        long t0 = System.nanoTime();
        HttpJson.Reply reply = b.post("/orders", body);
        return new Timed(reply.status(), reply.text("outcome"), System.nanoTime() - t0);
      });
    }
    long t0 = System.nanoTime();
    List<Timed> results = all(pool, calls);
    double seconds = (System.nanoTime() - t0) / 1e9;
    List<Long> created = latencies(results, "CREATED");
    List<Long> soldOut = latencies(results, "SOLD_OUT");
    long rows = count("SELECT count(*) FROM orders WHERE sku = ?", sku);
    long remaining = count("SELECT remaining FROM sku WHERE tenant = 't1' AND sku = ?", sku);
    long oversell = Math.max(0, rows - units);
    double httpRate = created.size() / seconds;

    // the same admission transaction, straight over JDBC: no HTTP, no Temporal
    String jsku = "bench-b1j-" + r;
    sku(jsku, units);
    OrderActivitiesImpl admission = new OrderActivitiesImpl(w.db(), Duration.ofMinutes(1));
    List<Callable<Timed>> direct = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CreateOrder req = new CreateOrder("t1", String.format("bench-u%02d", i % SUBJECTS), "b1j-" + r + "-" + i, jsku, 1, null);
      direct.add(() -> {
        long s = System.nanoTime();
        CreateResult res = admission.reserve(req, "bench-jdbc");
        return new Timed(0, res.outcome().name(), System.nanoTime() - s);
      });
    }
    long j0 = System.nanoTime();
    List<Timed> jres = all(pool, direct);
    double jseconds = (System.nanoTime() - j0) / 1e9;
    List<Long> jcreated = latencies(jres, "CREATED");
    double jdbcRate = jcreated.size() / jseconds;
    // the ceiling's orders have no workflow: cancel them so nothing is left non-final without one
    for (String id : column("SELECT order_id FROM orders WHERE sku = ?", jsku)) admission.cancel(id, "bench cleanup");

    line(String.format("B1 run %d: %d buyers for %d units in %.2f s: created=%d sold_out=%d other=%d created/s=%.1f"
            + " p50/p99 CREATED=%.1f/%.1f ms SOLD_OUT=%.1f/%.1f ms oversell=%d remaining=%d | JDBC ceiling created/s=%.1f"
            + " p50/p99=%.1f/%.1f ms | ratio http/jdbc=%.3f",
        r, n, units, seconds, created.size(), soldOut.size(), n - created.size() - soldOut.size(), httpRate,
        pct(created, 50), pct(created, 99), pct(soldOut, 50), pct(soldOut, 99), oversell, remaining, jdbcRate,
        pct(jcreated, 50), pct(jcreated, 99), httpRate / jdbcRate));
    put(m, "B1 created/s", httpRate);
    put(m, "B1 CREATED p50 ms", pct(created, 50));
    put(m, "B1 CREATED p99 ms", pct(created, 99));
    put(m, "B1 SOLD_OUT p50 ms", pct(soldOut, 50));
    put(m, "B1 SOLD_OUT p99 ms", pct(soldOut, 99));
    put(m, "B1 JDBC created/s", jdbcRate);
    put(m, "B1 ratio http/jdbc x1000", 1000 * httpRate / jdbcRate);
    if (oversell != 0 || created.size() != units) line("  !! B1 invariant broken: oversell=" + oversell);
  }

  private void b2(ExecutorService pool, int r, int orders, Map<String, List<Double>> m) throws Exception {
    String sku = "bench-b2-" + r;
    sku(sku, orders);
    long notesBefore = count("SELECT count(*) FROM payment_notification");
    List<Callable<Timed>> calls = new ArrayList<>();
    for (int i = 0; i < orders; i++) {
      HttpJson b = buyers.get(i % SUBJECTS);
      Map<String, Object> body = Map.of("request_key", "b2-" + r + "-" + i, "sku", sku, "quantity", 1);
      calls.add(() -> {
        String id = b.post("/orders", body).text("order_id");
        long t0 = System.nanoTime();
        HttpJson.Reply pay = b.post("/orders/" + id + "/pay", null);
        return new Timed(pay.status(), pay.text("status"), System.nanoTime() - t0);
      });
    }
    long t0 = System.nanoTime();
    List<Timed> results = all(pool, calls);
    long deadline = System.currentTimeMillis() + 120_000;
    while (count("SELECT count(*) FROM payment_notification WHERE effect IS NOT NULL") - notesBefore < orders
        && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    List<Long> paid = latencies(results, "PAID");
    long paidRows = count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", sku);
    line(String.format("B2 run %d: %d orders create→pay→callback in %.2f s: PAID=%d orders/s=%.1f pay p50/p99=%.1f/%.1f ms",
        r, orders, seconds, paidRows, paidRows / seconds, pct(paid, 50), pct(paid, 99)));
    put(m, "B2 orders/s", paidRows / seconds);
    put(m, "B2 pay p50 ms", pct(paid, 50));
    put(m, "B2 pay p99 ms", pct(paid, 99));
  }

  private void b3(ExecutorService pool, int r, int orders, int copies, Map<String, List<Double>> m) throws Exception {
    String sku = "bench-b3-" + r;
    sku(sku, orders);
    List<String> ids = new ArrayList<>();
    List<Callable<Timed>> setup = new ArrayList<>();
    for (int i = 0; i < orders; i++) {
      HttpJson b = buyers.get(i % SUBJECTS);
      Map<String, Object> body = Map.of("request_key", "b3-" + r + "-" + i, "sku", sku, "quantity", 1);
      setup.add(() -> {
        String id = b.post("/orders", body).text("order_id");
        channel.post("/_faults", Map.of("merchant_order", id, "reply_delay_ms", 1200, "hold_callbacks", true));
        HttpJson.Reply pay = b.post("/orders/" + id + "/pay", null);
        return new Timed(pay.status(), id, 0);
      });
    }
    for (Timed t : all(pool, setup)) ids.add(t.outcome());
    List<Callable<Timed>> storm = new ArrayList<>();
    for (String id : ids) {
      String txn = channel.get("/charges/" + id).text("txn");
      Map<String, Object> notice = Map.of("notify_id", "ntf-b3-" + id, "merchant_order", id, "kind", "CHARGED",
          "amount", 1990, "txn", txn);
      for (int k = 0; k < copies; k++) {
        storm.add(() -> {
          long t0 = System.nanoTime();
          HttpJson.Reply reply = api.post("/callbacks/payment", notice);
          return new Timed(reply.status(), String.valueOf(reply.status()), System.nanoTime() - t0);
        });
      }
    }
    Collections.shuffle(storm, new java.util.Random(r));
    long t0 = System.nanoTime();
    List<Timed> accepted = all(pool, storm);
    double acceptSeconds = (System.nanoTime() - t0) / 1e9;
    long deadline = System.currentTimeMillis() + 300_000;
    int total = orders * copies;
    while (count("SELECT count(*) FROM payment_notification WHERE notify_id LIKE ? AND effect IS NOT NULL",
        "ntf-b3-%") < (long) total * r && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
    }
    double applySeconds = (System.nanoTime() - t0) / 1e9;
    long paidEffects = count("SELECT count(*) FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
        + " WHERE o.sku = ? AND n.effect = 'PAID'", sku);
    long events = count("SELECT count(*) FROM outbox e JOIN orders o ON o.order_id = e.order_id WHERE o.sku = ?"
        + " AND e.event_type = 'ORDER_PAID'", sku);
    long toPaid = count("SELECT count(*) FROM order_transition t JOIN orders o ON o.order_id = t.order_id"
        + " WHERE o.sku = ? AND t.to_status = 'PAID'", sku);
    List<Long> lat = latencies(accepted, "200");
    line(String.format("B3 run %d: %d callbacks for %d orders: accepted in %.2f s (%.1f/s, p50/p99 %.1f/%.1f ms),"
            + " all applied after %.2f s (%.1f notices/s); PAID effects=%d transitions to PAID=%d ORDER_PAID events=%d"
            + " (expected %d each)",
        r, total, orders, acceptSeconds, total / acceptSeconds, pct(lat, 50), pct(lat, 99), applySeconds,
        total / applySeconds, paidEffects, toPaid, events, orders));
    put(m, "B3 accepted/s", total / acceptSeconds);
    put(m, "B3 applied notices/s", total / applySeconds);
    if (paidEffects != orders || toPaid != orders || events != orders) {
      line("  !! B3 invariant broken: effects not exactly once");
    }
  }

  private void sku(String sku, int total) {
    admin.post("/tasks/sku?tenant=t1&sku=" + sku + "&total=" + total + "&unit_price=1990&per_user_limit=100000", null);
  }

  private static List<Timed> all(ExecutorService pool, List<Callable<Timed>> calls) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Timed>> fs = new ArrayList<>();
    for (Callable<Timed> call : calls) {
      fs.add(pool.submit(() -> {
        go.await();
        return call.call();
      }));
    }
    go.countDown();
    List<Timed> out = new ArrayList<>();
    for (Future<Timed> f : fs) out.add(f.get());
    return out;
  }

  /** The latencies (ns) of the results with this outcome, sorted. */
  static List<Long> latencies(List<Timed> results, String outcome) {
    List<Long> l = new ArrayList<>();
    for (Timed t : results) if (outcome.equals(t.outcome())) l.add(t.nanos());
    Collections.sort(l);
    return l;
  }

  /** Nearest-rank percentile p of sorted latencies, in ms; NaN when there are none. */
  static double pct(List<Long> sorted, int p) {
    if (sorted.isEmpty()) return Double.NaN;
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i))) / 1e6;
  }

  static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    Collections.sort(s);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  /** One line of the summary: the metric and the median of its runs. */
  static String medianLine(String metric, List<Double> runs) {
    return String.format("  %-28s %10.1f", metric, median(runs));
  }

  private static void put(Map<String, List<Double>> m, String k, double v) {
    m.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
  }

  private long count(String sql, Object... args) {
    return w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
  }

  private List<String> column(String sql, Object... args) {
    return w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
        List<String> outList = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) outList.add(rs.getString(1));
        }
        return outList;
      }
    });
  }

  private void line(String s) {
    report.append(s).append('\n');
    out.println(s);
  }
}
