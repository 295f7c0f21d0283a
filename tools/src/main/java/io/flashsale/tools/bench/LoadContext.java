package io.flashsale.tools.bench;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.persistence.Database;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What every load scenario shares: the clients of the API, the admin port and the channel stub, the
 * buyers' logins, the database connection for the checks, fresh SKUs, and the MARK lines around
 * the measured window.
 */
final class LoadContext implements AutoCloseable {
  static final String TENANT = "t1";
  /** The subjects of the ceilings that need names only (jdbc, pgbench): no login. */
  static final int SUBJECTS = 50;
  /** The storms' distinct buyers unless the command says otherwise: a sale's crowd, not one buyer. */
  static final int STORM_BUYERS = 3_000;
  static final long UNIT_PRICE = 1990;
  /** How long the end-of-run waits (PAID, callbacks applied) give the service to converge. */
  static final Duration CONVERGE = Duration.ofSeconds(120);
  static final String SKU_PREFIX = "bench-";

  final Load.Endpoints at;
  final HttpJson api;
  final HttpJson admin;
  final HttpJson channel;
  final HttpClient raw = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  final Database checks;
  final PrintStream out;
  final List<HttpJson> buyers = new ArrayList<>();
  /** How many distinct buyers the storms rotate over (b1, b1-sold-out, b2, b3): one login each. */
  int stormBuyers = STORM_BUYERS;
  /** Makes this invocation's SKU names unique: the bench starts many load JVMs on one database. */
  final String tag = Long.toString(System.currentTimeMillis(), 36);

  LoadContext(Load.Endpoints at, PrintStream out) {
    this.at = at;
    this.api = new HttpJson(at.api(), null, Load.REQUEST_TIMEOUT);
    this.admin = new HttpJson(at.admin(), adminToken(), Load.REQUEST_TIMEOUT);
    // the merchant key: B3 reads the charges' txns from the channel's statement, as a merchant does
    this.channel = new HttpJson(at.channel(), at.merchantKey(), Load.REQUEST_TIMEOUT);
    this.checks = new Database(at.jdbcUrl(), at.dbUser(), at.dbPassword(), 2);
    this.out = out;
  }

  /** The storms' buyers' logins ({@link #stormBuyers} of them, distinct subjects), once per load JVM. */
  void login() {
    if (!buyers.isEmpty()) return;
    for (String token : Logins.of(api, TENANT, "bench-b" + tag + "-", stormBuyers)) buyers.add(api.as(token));
  }

  /** The buyer of the storm's {@code i}-th request: each buyer in turn. */
  HttpJson buyer(int i) {
    return buyers.get(i % buyers.size());
  }

  static String subject(int i) {
    return String.format("bench-u%02d", i % SUBJECTS);
  }

  /** The admin credential of a service that is not the local default (FLASHSALE_ADMIN_TOKEN), else none. */
  static String adminToken() {
    String token = System.getenv("FLASHSALE_ADMIN_TOKEN");
    return token == null || token.isBlank() ? null : token;
  }

  /** The answer's field, or HTTP_status when it has none. */
  static String outcome(HttpJson.Reply r, String field) {
    String o = r.text(field);
    return o != null ? o : "HTTP_" + r.status();
  }

  /**
   * A fresh SKU through the admin task, as an operator creates one. Its name is unique to this
   * load JVM, and request keys start with it: a key reused across runs would answer KEY_REUSED.
   */
  String newSku(String name, int total) {
    return newSku(name, total, 1_000_000);
  }

  String newSku(String name, int total, int perUserLimit) {
    String sku = SKU_PREFIX + name + "-" + tag;
    HttpJson.Reply r = admin.post("/tasks/sku?tenant=" + TENANT + "&sku=" + sku + "&total=" + total + "&unit_price="
        + UNIT_PRICE + "&per_user_limit=" + perUserLimit, null);
    if (r.status() != 200) throw new IllegalStateException("creating SKU " + sku + ": " + r.status() + " " + r.raw());
    return sku;
  }

  /** A throwaway SKU of the ceilings, with its orders (they never had a workflow). */
  void deleteSku(String sku) {
    checks.inTx(c -> {
      for (String sql : List.of(
          "DELETE FROM order_transition WHERE order_id IN (SELECT order_id FROM orders WHERE tenant = ? AND sku = ?)",
          "DELETE FROM orders WHERE tenant = ? AND sku = ?",
          "DELETE FROM reservation WHERE tenant = ? AND sku = ?",
          "DELETE FROM sku WHERE tenant = ? AND sku = ?")) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setString(1, TENANT);
          ps.setString(2, sku);
          ps.executeUpdate();
        }
      }
      return null;
    });
  }

  /** The count once it has not grown for a second (bounded by the convergence wait). */
  long settledCount(String sql, String arg) throws InterruptedException {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    long n = count(sql, arg);
    long stableSince = System.nanoTime();
    while (System.nanoTime() - stableSince < Duration.ofSeconds(1).toNanos() && System.nanoTime() < deadline) {
      Thread.sleep(100);
      long now = count(sql, arg);
      if (now != n) {
        n = now;
        stableSince = System.nanoTime();
      }
    }
    return n;
  }

  /** The count once it reached {@code expected}, or where it stood at the end of the convergence wait. */
  long awaitCount(String sql, long expected, String arg) throws InterruptedException {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    long n;
    while ((n = count(sql, arg)) < expected && System.nanoTime() < deadline) Thread.sleep(20);
    return n;
  }

  /** {@code read} again every 50 ms until {@code done} holds of it or the convergence wait ends; its last value. */
  <T> T awaitUntil(java.util.function.Supplier<T> read, java.util.function.Predicate<T> done) throws InterruptedException {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    T value = read.get();
    while (!done.test(value) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      value = read.get();
    }
    return value;
  }

  long count(String sql, Object... args) {
    return firstRow(sql, rs -> rs.getLong(1), args);
  }

  /** Reads one row of a check query (which always has one: an aggregate, or the SKU just made). */
  <T> T firstRow(String sql, Row<T> reader, Object... args) {
    return checks.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) throw new IllegalStateException("no row for " + java.util.Arrays.toString(args));
          return reader.read(rs);
        }
      }
    });
  }

  /** Every order of the SKU: its id and status. */
  Map<String, String> statuses(String sku) {
    return checks.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT order_id, status FROM orders WHERE sku = ?")) {
        ps.setString(1, sku);
        Map<String, String> out = new java.util.HashMap<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) out.put(rs.getString(1), rs.getString(2));
        }
        return out;
      }
    });
  }

  interface Row<T> {
    T read(ResultSet rs) throws java.sql.SQLException;
  }

  /** A scenario's result from its batch: the headline latencies' p50 and p99, every outcome counted. */
  static ScenarioResult result(String scenario, int run, int clients, ClosedLoop.Batch b, double rate, String unit,
      List<Long> headline, Map<String, Double> metrics, List<String> broken, List<String> notes) {
    return new ScenarioResult(scenario, run, clients, b.results().size(), b.seconds(), rate, unit,
        Stats.pct(headline, 50), Stats.pct(headline, 99), Stats.outcomes(b.results()), metrics, broken, "", notes);
  }

  /** MARK start / MARK end: the bench samples CPU between them. */
  void mark(String what) {
    out.println(what);
    out.flush();
  }

  @Override
  public void close() {
    checks.close();
  }
}
