package io.flashsale.tools;

import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.tools.bench.CpuSplit;
import io.flashsale.tools.bench.Load;
import io.flashsale.tools.bench.ServiceCpu;
import io.flashsale.tools.bench.Wrk;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bench's figures from wrk, a generator far lighter than the load JVM: the sold-out answer
 * against the same Jetty's trivial answer, and copies of B3's applied notices as a channel's retry
 * storm at its steady state. Without wrk on the PATH each says so and measures nothing.
 */
final class WrkFigures {
  private final FlashsaleApplication.Wiring w;
  private final String apiUrl;
  private final String adminUrl;
  private final Bench.Options o;
  private final BenchReport report;
  private final ServiceCpu cpu;
  private final int cores;

  WrkFigures(FlashsaleApplication.Wiring w, String apiUrl, String adminUrl, Bench.Options o, BenchReport report,
      ServiceCpu cpu, int cores) {
    this.w = w;
    this.apiUrl = apiUrl;
    this.adminUrl = adminUrl;
    this.o = o;
    this.report = report;
    this.cpu = cpu;
    this.cores = cores;
  }

  /** How long each wrk measurement runs. */
  static final int WRK_SECONDS = 10;

  /**
   * The sold-out answer against the same Jetty's trivial answer (the admin port's GET /ping), both
   * from wrk at the same connections in this run: a generator light enough that the ratio is the
   * server's. Without wrk on the PATH this says so and measures nothing.
   */
  void lightFloors(Map<String, List<Double>> medians) {
    lightFloors(medians, "");
  }

  /** The same; {@code label} (e.g. "first minute ") goes before each figure's name. */
  void lightFloors(Map<String, List<Double>> medians, String label) {
    measure("(apt-get install wrk): no floor and no light-generator sold-out figure", "measure the floors",
        () -> wrkFloors(medians, label));
  }

  /** A measurement by wrk: without wrk on the PATH it says so; one that fails is said, and the bench goes on. */
  private void measure(String withoutWrk, String what, Measurement m) {
    if (!Wrk.onPath()) {
      report.line("  wrk: not on the PATH" + withoutWrk);
      return;
    }
    try {
      m.run();
    } catch (Exception e) {
      report.line("  wrk: could not " + what + ": " + e);
    }
  }

  private interface Measurement {
    void run() throws Exception;
  }

  /** A SKU of tenant t1 for one storm, named after {@code prefix} and this bench. */
  private String newSku(String prefix, int total, int perUserLimit) {
    String sku = prefix + o.stamp().replace("-", "") + "-" + System.nanoTime() % 100_000;
    HttpJson.Reply made = new HttpJson(adminUrl, null, Duration.ofSeconds(30)).post("/tasks/sku?tenant=t1&sku=" + sku
        + "&total=" + total + "&unit_price=1990&per_user_limit=" + perUserLimit, null);
    if (made.status() != 200) throw new IllegalStateException("creating " + sku + ": " + made.status() + " " + made.raw());
    return sku;
  }

  /** The storm's distinct buyers (--storm-buyers), one login each. */
  private List<String> crowd(String prefix) {
    return io.flashsale.tools.bench.Logins.of(new HttpJson(apiUrl, null, Duration.ofSeconds(30)), "t1",
        prefix + o.stamp() + "-", o.stormBuyers());
  }

  private void wrkFloors(Map<String, List<Double>> medians, String label) throws Exception {
    String sku = newSku("bench-wrk-", 0, 1);
    // a crowd, as in a sale: every request from the next of the storm's distinct buyers
    List<String> tokens = crowd("bench-wrk-");
    Wrk.Result floor = wrk(label + "floor (wrk GET /ping, admin port)", Wrk.get(adminUrl + "/ping", 200, o.concurrency(),
        WRK_SECONDS), "answer");
    Wrk.Result soldOut = wrk(label + "sold out (wrk POST /orders, 409 SOLD_OUT, " + tokens.size() + " distinct buyers)", Wrk.create(apiUrl, tokens, sku, 409,
        o.concurrency(), WRK_SECONDS), "sold-out answer");
    long orders = w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM orders WHERE sku = ?")) {
        ps.setString(1, sku);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
    if (orders != 0) report.flag(orders + " orders on the wrk SKU that has no stock");
    if (soldOut.otherStatus() > 0 || soldOut.socketErrors() > 0) {
      report.flag("wrk sold out: " + soldOut.otherStatus() + " answers other than 409, " + soldOut.socketErrors() + " socket errors");
    }
    BenchReport.put(medians, label + "wrk floor answers/s", floor.rate());
    BenchReport.put(medians, label + "wrk floor p99 ms", floor.p99Ms());
    BenchReport.put(medians, label + "wrk sold_out/s", soldOut.rate());
    BenchReport.put(medians, label + "wrk sold_out p99 ms", soldOut.p99Ms());
    if (BenchReport.ratio(soldOut.rate(), floor.rate())) {
      report.line(String.format("  %sratio sold-out / floor (both wrk) = %.3f", label, soldOut.rate() / floor.rate()));
      BenchReport.put(medians, label + "ratio wrk sold_out/floor", soldOut.rate() / floor.rate());
    }
  }

  /** How long wrk waits for a create's answer: a late one is seen and counted, not cut at 2 s. */
  static final int LATE_ANSWER_SECONDS = 30;

  /** Consecutive create storms on one SKU: a sale's buyers come in waves and the open orders stay. */
  static final int CREATE_STORMS = 3;
  /** Created/s of the storms within this fraction of each other: throughput holds as a sale goes on. */
  static final double STORMS_AGREE_WITHIN = 0.20;

  /**
   * Three wrk create storms in a row on one SKU with stock for all (the crowd's distinct buyers, a
   * fresh key each, a buyer's limit no storm reaches): created/s of each, the 503s, the requests
   * wrk saw unanswered after 2 s (its timeout) and the p99; then whether the storms agree, as a
   * sale whose open orders pile up should. The orders stay, as a sale's would, until they expire.
   */
  void createStorms(Map<String, List<Double>> medians, String label) {
    measure(": no create storms", "run the create storms", () -> wrkCreateStorms(medians, label));
  }

  private void wrkCreateStorms(Map<String, List<Double>> medians, String label) throws Exception {
    String sku = newSku("bench-storm-", 1_000_000, 1_000_000);
    List<String> tokens = crowd("bench-storm-");
    List<Double> rates = new ArrayList<>();
    for (int i = 1; i <= CREATE_STORMS; i++) {
      Wrk.Result r = wrk(String.format("%screate storm %d of %d (wrk POST /orders, 201 CREATED, %d distinct buyers, one SKU)",
          label, i, CREATE_STORMS, tokens.size()), Wrk.create(apiUrl, tokens, sku, 201, o.concurrency(), WRK_SECONDS,
          LATE_ANSWER_SECONDS), "created order");
      long other = r.otherStatus() - r.busy();
      report.line(String.format("    503 with Retry-After %.1f/s; answered after 2 s or not at all: %d (target 0); other"
          + " answers %d, socket errors %d", r.busy() / r.seconds(), r.past2s(), other, r.socketErrors()));
      if (other > 0) report.flag("create storm " + i + ": " + other + " answers neither 201 nor 503");
      rates.add(r.rate());
      BenchReport.put(medians, label + "wrk create storm " + i + " created/s", r.rate());
      BenchReport.put(medians, label + "wrk create storm " + i + " answered after 2 s", (double) r.past2s());
      BenchReport.put(medians, label + "wrk create storm " + i + " p99 ms", r.p99Ms());
    }
    double low = rates.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    double high = rates.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    if (BenchReport.ratio(low, high)) {
      double spread = 1 - low / high;
      report.line(String.format("  %screate storms: created/s %s, the lowest %.0f %% below the highest (target: within %.0f %%, %s)",
          label, rates.stream().map(v -> String.format("%.1f", v)).toList(), 100 * spread, 100 * STORMS_AGREE_WITHIN,
          spread <= STORMS_AGREE_WITHIN ? "met" : "not met"));
      BenchReport.put(medians, label + "wrk create storms spread", spread);
    }
  }

  /** The notices that paid a run's B3 orders (their notify ids begin with Load.stormNotifyIdPrefix). */
  private static final String STORM_NOTICES = "SELECT n.notify_id, n.merchant_order, n.kind, n.amount, n.txn"
      + " FROM payment_notification n WHERE n.effect = 'PAID' AND n.notify_id LIKE ? || '%'"
      + " ORDER BY n.id DESC LIMIT 20";

  /** The arrivals of some orders once wrk's copies were sent; {@code lastId} the newest id before them. */
  private static final String AFTER_COPIES = "SELECT count(*) FILTER (WHERE id > ?),"
      + " count(*) FILTER (WHERE effect IS NULL), count(*) FILTER (WHERE effect = 'PAID'),"
      // answered at arrival: the effect came with the INSERT (applied_at = received_at), and it is a duplicate's
      + " count(*) FILTER (WHERE id > ? AND (applied_at IS DISTINCT FROM received_at OR effect NOT LIKE 'DUPLICATE %')),"
      + " (SELECT count(*) FROM outbox WHERE order_id = ANY (?) AND event_type = 'ORDER_PAID')"
      + " FROM payment_notification WHERE merchant_order = ANY (?)";

  /**
   * A channel's retry storm at its steady state, from wrk: copies of the notices B3's orders
   * applied, signed as the channel signs them, each answered at arrival ({@code DUPLICATE PAID},
   * docs/DESIGN.md §Callbacks). Afterwards every arrival has its effect and each order is still
   * PAID once, with one ORDER_PAID event.
   */
  void lightCallbackCopies(int run, Map<String, List<Double>> medians) {
    measure(": no light-generator figure for callback copies", "measure the callback copies",
        () -> wrkCallbackCopies(run, medians));
  }

  private void wrkCallbackCopies(int run, Map<String, List<Double>> medians) throws Exception {
    List<Map<String, Object>> notices = w.db().read(c -> {
      List<Map<String, Object>> rows = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(STORM_NOTICES)) {
        ps.setString(1, Load.stormNotifyIdPrefix(run));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("notify_id", rs.getString(1));
            n.put("merchant_order", rs.getString(2));
            n.put("kind", rs.getString(3));
            n.put("amount", rs.getLong(4));
            n.put("txn", rs.getString(5));
            rows.add(n);
          }
        }
      }
      return rows;
    });
    if (notices.isEmpty()) {
      report.line("  wrk: no applied B3 notice to copy");
      return;
    }
    List<String> orders = notices.stream().map(n -> (String) n.get("merchant_order")).toList();
    String secret = w.callbackSecret();
    long now = System.currentTimeMillis() / 1000; // the signatures stay valid for 300 s, the run takes 10
    List<Wrk.SignedCallback> copies = new ArrayList<>();
    for (Map<String, Object> n : notices) copies.add(Wrk.SignedCallback.of(HttpJson.JSON.writeValueAsString(n), secret, now));
    long lastId = w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT coalesce(max(id), 0) FROM payment_notification WHERE merchant_order = ANY (?)")) {
        ps.setArray(1, c.createArrayOf("text", orders.toArray()));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
    Wrk.Result r = wrk("callback copies (wrk POST /callbacks/payment, " + notices.size() + " applied notices, answered at arrival)",
        Wrk.callbacks(apiUrl, copies, 200, o.concurrency(), WRK_SECONDS), "callback copy");
    long[] after = w.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(AFTER_COPIES)) {
        java.sql.Array ids = c.createArrayOf("text", orders.toArray());
        ps.setLong(1, lastId);
        ps.setLong(2, lastId);
        ps.setArray(3, ids);
        ps.setArray(4, ids);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)};
        }
      }
    });
    long recorded = after[0];
    long waiting = after[1];
    long paidEffects = after[2];
    long notAtArrival = after[3];
    long paidEvents = after[4];
    report.line(String.format("    %d arrivals recorded for %d answers, %d without an effect, %d not answered at arrival;"
        + " PAID effects %d and ORDER_PAID events %d for %d orders",
        recorded, r.expectedStatus(), waiting, notAtArrival, paidEffects, paidEvents, orders.size()));
    if (notAtArrival > 0) report.flag(notAtArrival + " copies of an applied notice were not answered at arrival");
    if (r.otherStatus() > 0 || r.socketErrors() > 0) {
      report.flag("wrk callback copies: " + r.otherStatus() + " answers other than 200, " + r.socketErrors() + " socket errors");
    }
    if (recorded < r.expectedStatus()) report.flag((r.expectedStatus() - recorded) + " answered callback copies without an arrival row");
    if (waiting > 0) report.flag(waiting + " callback copies still without an effect after wrk");
    if (paidEffects != orders.size() || paidEvents != orders.size()) {
      report.flag("callback copies: " + paidEffects + " PAID effects and " + paidEvents + " ORDER_PAID events for " + orders.size() + " orders");
    }
    BenchReport.put(medians, "wrk callback copies/s", r.rate());
    BenchReport.put(medians, "wrk callback copy p99 ms", r.p99Ms());
  }

  private Wrk.Result wrk(String what, Process p, String operation) throws Exception {
    CpuSplit.Sample start = cpu.sample(p.toHandle());
    Wrk.Result r;
    try {
      r = Wrk.finish(p);
    } finally {
      p.destroyForcibly(); // gone already, unless finish failed
    }
    CpuSplit.Sample after = cpu.sample(p.toHandle()); // wrk has exited: its CPU is the one it reported
    CpuSplit split = CpuSplit.between(start, new CpuSplit.Sample(after.wallNanos(), after.parts(),
        start.clientNanos() + (Double.isNaN(r.cpuSeconds()) ? 0 : (long) (r.cpuSeconds() * 1e9))), cores);
    report.line(String.format("  %s: %.1f/s, p50 / p99 %.2f / %.2f ms, %d requests (%d other status, %d socket errors)", what,
        r.rate(), r.p50Ms(), r.p99Ms(), r.requests(), r.otherStatus(), r.socketErrors()));
    report.line("    " + split.perOperationLine(operation, r.expectedStatus()));
    return r;
  }
}
