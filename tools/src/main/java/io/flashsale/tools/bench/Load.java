package io.flashsale.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.activities.OrderActivitiesImpl;
import io.flashsale.domain.CreateOrder;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.persistence.Database;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The load scenarios, driven from their own JVM like any client: HTTP to the API, the admin port
 * and the channel stub; JDBC only for the ceiling (jdbc, pgbench) and for checking invariants.
 * Every scenario prints "MARK start" / "MARK end" around its measured window (the bench samples
 * CPU there) and returns one {@link ScenarioResult}.
 */
public final class Load implements AutoCloseable {
  public static final String MARK_START = "MARK start";
  public static final String MARK_END = "MARK end";
  static final String TENANT = "t1";
  static final int SUBJECTS = 50;
  static final long UNIT_PRICE = 1990;
  /** The reservation TTL the jdbc ceiling's orders get, as the service's default. */
  private static final Duration RESERVATION_TTL = Duration.ofMinutes(1);
  private static final Duration CONVERGE = Duration.ofSeconds(120);
  /**
   * How long the load waits for one answer: generous (a slow engine may take seconds) but bounded,
   * so a request that never answers becomes a {@link ClosedLoop#CLIENT_TIMEOUT} outcome.
   */
  public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);
  /** The reconcile task audits every open order's workflow: thousands of them take minutes on a busy engine. */
  public static final Duration RECONCILE_TIMEOUT = Duration.ofMinutes(5);

  /** Where the service is, and the database behind it. */
  public record Endpoints(String api, String admin, String channel, String jdbcUrl, String dbUser, String dbPassword,
      String callbackSecret, String merchantKey, String temporal, String namespace) {}

  private final Endpoints at;
  private final HttpJson api;
  private final HttpJson admin;
  private final HttpJson channel;
  private final HttpClient raw = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final Database checks;
  private final PrintStream out;
  private final List<HttpJson> buyers = new ArrayList<>();
  /** Makes this invocation's SKU names unique: the bench starts many load JVMs on one database. */
  private final String tag = Long.toString(System.currentTimeMillis(), 36);

  /** Arrivals per second of b1 and b1-sold-out; 0: a closed loop of the scenario's clients. */
  private double openRate;

  /** B1 and B1 sold out as an open loop at {@code perSecond} arrivals (0: closed loop). */
  public Load openLoop(double perSecond) {
    this.openRate = perSecond;
    return this;
  }

  private ClosedLoop.Batch drive(int clients, int n, Duration max, java.util.function.IntFunction<Timed> request)
      throws Exception {
    return openRate > 0 ? OpenLoop.run(openRate, n, max, request) : ClosedLoop.run(clients, n, max, request);
  }

  public Load(Endpoints at, PrintStream out) {
    this.at = at;
    this.api = new HttpJson(at.api(), null, REQUEST_TIMEOUT);
    this.admin = new HttpJson(at.admin(), adminToken(), REQUEST_TIMEOUT);
    // the merchant key: B3 asks the channel for a charge's txn like the service does
    this.channel = new HttpJson(at.channel(), at.merchantKey(), REQUEST_TIMEOUT);
    this.checks = new Database(at.jdbcUrl(), at.dbUser(), at.dbPassword(), 2);
    this.out = out;
  }

  private void login() {
    if (!buyers.isEmpty()) return;
    for (int i = 0; i < SUBJECTS; i++) buyers.add(api.login(TENANT, subject(i)));
  }

  static String subject(int i) {
    return String.format("bench-u%02d", i % SUBJECTS);
  }

  // ---------------------------------------------------------------- b1: admission

  /** N buyers, distinct keys, 50 subjects, one SKU of {@code stock} units. */
  public ScenarioResult b1(int run, int n, int stock, int clients, Duration max) throws Exception {
    login();
    String sku = newSku("b1-" + run, stock);
    mark(MARK_START);
    ClosedLoop.Batch b = drive(clients, n, max, i -> create(buyers.get(i % SUBJECTS), sku, sku + "-" + i));
    mark(MARK_END);
    List<Long> created = Stats.latencies(b.results(), "CREATED");
    List<Long> soldOut = Stats.latencies(b.results(), "SOLD_OUT");
    Stock s = stock(sku);
    List<String> broken = new ArrayList<>(s.broken());
    if (s.orderRows() < created.size()) {
      broken.add(created.size() + " CREATED answers but " + s.orderRows() + " order rows");
    }
    Map<String, Double> m = new LinkedHashMap<>();
    m.put("sold_out/s", soldOut.size() / b.seconds());
    if (!soldOut.isEmpty()) { // no sold-out answer, no sold-out latency
      m.put("sold_out p50 ms", Stats.pct(soldOut, 50));
      m.put("sold_out p99 ms", Stats.pct(soldOut, 99));
    }
    List<Long> overloaded = Stats.latencies(b.results(), "OVERLOADED");
    if (!overloaded.isEmpty()) { // refused for load: the refusal's own latency (it must come at once)
      m.put("overloaded p50 ms", Stats.pct(overloaded, 50));
      m.put("overloaded p99 ms", Stats.pct(overloaded, 99));
    }
    m.put("oversell", (double) s.oversell());
    m.put("remaining", (double) s.remaining());
    m.put("order rows", (double) s.orderRows());
    return result("b1", run, clients, b, created.size() / b.seconds(), "created/s", created, m, broken,
        openRate > 0 ? List.of("stock " + stock, String.format("open loop at %.1f arrivals/s", openRate))
            : List.of("stock " + stock));
  }

  /** Requests against a SKU with nothing left (total 0): the cheap gate's answer. */
  public ScenarioResult b1SoldOut(int run, int n, int clients, Duration max) throws Exception {
    login();
    String sku = newSku("b1s-" + run, 0);
    mark(MARK_START);
    ClosedLoop.Batch b = drive(clients, n, max, i -> create(buyers.get(i % SUBJECTS), sku, sku + "-" + i));
    mark(MARK_END);
    List<Long> soldOut = Stats.latencies(b.results(), "SOLD_OUT");
    Stock s = stock(sku);
    List<String> broken = new ArrayList<>(s.broken());
    if (s.orderRows() != 0) broken.add(s.orderRows() + " orders on a SKU with no stock");
    return result("b1-sold-out", run, clients, b, soldOut.size() / b.seconds(), "sold_out/s", soldOut,
        new LinkedHashMap<>(), broken, List.of());
  }

  private Timed create(HttpJson buyer, String sku, String key) {
    return ClosedLoop.timed(() -> outcome(buyer.post("/orders", Map.of("request_key", key, "sku", sku, "quantity", 1)),
        "outcome"));
  }

  private static String outcome(HttpJson.Reply r, String field) {
    String o = r.text(field);
    return o != null ? o : "HTTP_" + r.status();
  }

  // ---------------------------------------------------------------- the JDBC ceiling

  /**
   * The same admission (OrderActivitiesImpl.reserve, so the very same SQL) straight over JDBC:
   * no HTTP, no Temporal. C client threads share a pool of {@code poolSize} connections: the hot
   * SKU row serializes them, so a few connections are the fastest.
   */
  public ScenarioResult jdbc(int run, int n, int clients, int poolSize, Duration max) throws Exception {
    String sku = newSku("jdbc-" + run, 2 * n);
    try (Database db = new Database(at.jdbcUrl(), at.dbUser(), at.dbPassword(), poolSize, Duration.ofSeconds(60))) {
      OrderActivitiesImpl admission = new OrderActivitiesImpl(db, RESERVATION_TTL);
      db.read(c -> c.isValid(1)); // the pool's first connection before the window
      mark(MARK_START);
      ClosedLoop.Batch b = ClosedLoop.run(clients, n, max, i -> ClosedLoop.timed(() -> admission.reserve(
          new CreateOrder(TENANT, subject(i), sku + "-" + i, sku, 1, null), "bench-jdbc").outcome().name()));
      mark(MARK_END);
      List<Long> created = Stats.latencies(b.results(), "CREATED");
      Stock s = stock(sku);
      List<String> broken = new ArrayList<>(s.broken());
      if (s.orderRows() != created.size()) broken.add(created.size() + " CREATED but " + s.orderRows() + " order rows");
      // these orders have no workflow: they go, so nothing is left non-final without one
      deleteSku(sku);
      return result("jdbc", run, clients, b, created.size() / b.seconds(), "created/s", created,
          new LinkedHashMap<>(), broken, List.of("pool " + poolSize));
    }
  }

  /** pgbench on the admission's statements (see {@link Pgbench}), at the same client count. */
  public ScenarioResult pgbench(int run, int clients, int seconds) throws Exception {
    String sku = newSku("pgb-" + run, 1_000_000_000);
    Path script = Files.createTempFile("flashsale-admission-", ".sql");
    Pgbench.Target target = Pgbench.Target.of(at.jdbcUrl(), at.dbUser(), at.dbPassword());
    try {
      Files.writeString(script, Pgbench.script(TENANT, sku, "pgb-u", SUBJECTS, UNIT_PRICE, RESERVATION_TTL.toMillis()));
      ProcessBuilder pb = new ProcessBuilder(Pgbench.command(target, script.toString(), clients, seconds))
          .redirectErrorStream(true);
      if (target.password() != null && !target.password().isEmpty()) pb.environment().put("PGPASSWORD", target.password());
      mark(MARK_START);
      long t0 = System.nanoTime();
      Process p = pb.start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int code = p.waitFor();
      double wall = (System.nanoTime() - t0) / 1e9;
      mark(MARK_END);
      List<String> broken = new ArrayList<>();
      Pgbench.Summary sum;
      try {
        sum = Pgbench.parse(output);
      } catch (IllegalArgumentException e) {
        broken.add("pgbench failed (exit " + code + "): " + output.strip().replace('\n', ' '));
        sum = new Pgbench.Summary(Double.NaN, 0, 0, Double.NaN);
      }
      if (sum.failed() > 0) broken.add(sum.failed() + " pgbench transactions failed");
      // a client that hits an error aborts and pgbench exits 2, yet still prints a tps for the others
      if (code != 0 && !Double.isNaN(sum.tps())) broken.add("pgbench exit " + code + ": " + Pgbench.errors(output));
      Stock s = stock(sku);
      broken.addAll(s.broken());
      Map<String, Double> m = new LinkedHashMap<>();
      m.put("latency avg ms", sum.latencyAverageMs());
      deleteSku(sku);
      // pgbench gives an average latency, not percentiles: p50/p99 stay NaN rather than pass the mean off as a median
      return new ScenarioResult("pgbench", run, clients, sum.processed(), wall, sum.tps(), "tx/s", Double.NaN,
          Double.NaN, Map.of("COMMITTED", sum.processed()), m, broken, "", List.of("pgbench reports the mean latency only"));
    } finally {
      Files.deleteIfExists(script);
    }
  }

  // ---------------------------------------------------------------- b4: the crowd

  /** How often the crowd's set-up tries one buyer's login. */
  static final int LOGIN_ATTEMPTS = 3;

  /** The outcomes a buyer may end with: anything else (a 503 never retried to an answer, no answer) is a failure. */
  static final java.util.Set<String> DEFINITE = java.util.Set.of("CREATED", "REPLAY", "SOLD_OUT", "USER_LIMIT");

  /**
   * A buyer who has a unit: CREATED, or REPLAY (an earlier try answered 503 at the engine's deadline
   * while its order was made, and the retry with the key was answered from the row).
   */
  static boolean bought(String outcome) {
    return outcome.equals("CREATED") || outcome.equals("REPLAY");
  }

  /**
   * B4, the crowd: {@code n} distinct buyers (one login each) arrive within {@code arrivalSeconds}
   * for {@code units} of one SKU (one per buyer). A 503 is retried with the same key after its
   * Retry-After until the buyer has a definite answer. Reports the time until the last buyer had
   * it, latency per outcome (first send to final answer), the 503s and retries, and fairness: of
   * the units sold, how many went to the first tenth of the arrivals by send time.
   */
  public ScenarioResult b4(int run, int n, int units, double arrivalSeconds, Duration max) throws Exception {
    String[] tokens = new String[n]; // written by the login threads, read after their batch ended
    String prefix = "b4-" + run + "-" + tag + "-";
    // the logins are the crowd's set-up, not its measure: a login that failed (a timeout on a machine
    // still busy with the scenario before) is tried again, up to LOGIN_ATTEMPTS times
    ClosedLoop.Batch logins = ClosedLoop.run(16, n, Duration.ofMinutes(10), i -> {
      for (int attempt = 1; ; attempt++) {
        try {
          tokens[i] = api.login(TENANT, prefix + i).token();
          return new Timed("LOGGED_IN", 0);
        } catch (RuntimeException e) {
          if (attempt == LOGIN_ATTEMPTS) throw e;
          try {
            Thread.sleep(200L * attempt);
          } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw e;
          }
        }
      }
    });
    Map<String, Long> failedLogins = logins.results().stream().filter(t -> !t.outcome().equals("LOGGED_IN"))
        .collect(java.util.stream.Collectors.groupingBy(Timed::outcome, java.util.TreeMap::new,
            java.util.stream.Collectors.counting()));
    if (!failedLogins.isEmpty()) {
      throw new IllegalStateException("of the crowd's logins, after " + LOGIN_ATTEMPTS + " attempts each, these failed: "
          + failedLogins);
    }
    String sku = newSku("b4-" + run, units, 1);
    List<Crowd.Ended> ended;
    long unavailable;
    long connectionRetries;
    long t0;
    try (Crowd crowd = new Crowd(n)) {
      mark(MARK_START);
      t0 = System.nanoTime();
      ended = crowd.run(at.api() + "/orders", tokens,
          i -> "{\"request_key\":\"" + sku + "-" + i + "\",\"sku\":\"" + sku + "\",\"quantity\":1}",
          n / arrivalSeconds, REQUEST_TIMEOUT, t0 + max.toNanos(), t0);
      unavailable = crowd.unavailable();
      connectionRetries = crowd.connectionRetries();
    }
    List<Timed> results = new ArrayList<>();
    for (Crowd.Ended e : ended) results.add(new Timed(e.outcome(), e.nanos()));
    ClosedLoop.Batch b = new ClosedLoop.Batch(results, (System.nanoTime() - t0) / 1e9);
    mark(MARK_END);
    List<Crowd.Ended> buyers = new ArrayList<>(ended);
    buyers.sort(java.util.Comparator.comparingLong(Crowd.Ended::firstSentNanos));
    Map<String, Double> m = new LinkedHashMap<>();
    double lastAnswer = buyers.stream().mapToLong(x -> x.firstSentNanos() + x.nanos()).max().orElse(0) / 1e9;
    double lastArrival = buyers.isEmpty() ? 0 : buyers.get(buyers.size() - 1).firstSentNanos() / 1e9;
    m.put("last answer s", lastAnswer);
    m.put("last arrival s", lastArrival);
    for (String o : List.of("CREATED", "SOLD_OUT", "USER_LIMIT")) {
      List<Long> lat = new ArrayList<>();
      for (Crowd.Ended x : buyers) if (x.outcome().equals(o)) lat.add(x.nanos());
      Collections.sort(lat);
      if (lat.isEmpty()) continue;
      m.put(o + " p50 ms", Stats.pct(lat, 50));
      m.put(o + " p99 ms", Stats.pct(lat, 99));
    }
    m.put("503 answers", (double) unavailable);
    m.put("retries", (double) buyers.stream().mapToInt(Crowd.Ended::retries).sum());
    m.put("retries after a failed connection", (double) connectionRetries);
    int firstTenth = Math.max(1, n / 10);
    long soldToFirst = buyers.stream().limit(firstTenth).filter(x -> bought(x.outcome())).count();
    long sold = buyers.stream().filter(x -> bought(x.outcome())).count();
    m.put("units to the first " + firstTenth + " arrivals", (double) soldToFirst);
    Stock s = stock(sku);
    List<String> broken = new ArrayList<>(s.broken());
    long undecided = buyers.stream().filter(x -> !DEFINITE.contains(x.outcome())).count();
    if (undecided > 0) broken.add(undecided + " buyers without a definite answer: " + Stats.outcomes(b.results()));
    if (buyers.size() != n) broken.add((n - buyers.size()) + " buyers never sent");
    if (s.orderRows() < sold) broken.add(sold + " CREATED or REPLAY answers but " + s.orderRows() + " order rows");
    m.put("oversell", (double) s.oversell());
    m.put("remaining", (double) s.remaining());
    List<Long> created = Stats.latencies(b.results(), "CREATED");
    return new ScenarioResult("b4", run, n, b.results().size(), (System.nanoTime() - t0) / 1e9, lastAnswer,
        "s until the last buyer's answer", Stats.pct(created, 50), Stats.pct(created, 99), Stats.outcomes(b.results()), m,
        broken, "", List.of(units + " units, " + n + " buyers arriving within " + arrivalSeconds + " s, 503s retried"
            + " after Retry-After and failed connections after 1 s, same key; latency = first send to final answer"));
  }

  // ---------------------------------------------------------------- the engine ceiling

  /**
   * N order-shaped workflows ({@link EngineCeiling}) by update-with-start at C clients, straight to
   * the engine the service uses: no HTTP, no database. Their worker is the service JVM's. After the
   * window every run is terminated, so no pending timer is left to fire in a later scenario.
   */
  public ScenarioResult engine(int run, int n, int clients, Duration max) throws Exception {
    if (at.temporal() == null || at.temporal().isBlank()) throw new IllegalArgumentException("engine needs --temporal");
    io.temporal.serviceclient.WorkflowServiceStubs service = io.temporal.serviceclient.WorkflowServiceStubs.newServiceStubs(
        io.temporal.serviceclient.WorkflowServiceStubsOptions.newBuilder().setTarget(at.temporal()).build());
    try {
      io.temporal.client.WorkflowClient client = io.temporal.client.WorkflowClient.newInstance(service,
          io.temporal.client.WorkflowClientOptions.newBuilder().setNamespace(at.namespace()).build());
      String sku = "bench-engine-" + run + "-" + tag;
      mark(MARK_START);
      java.util.concurrent.ExecutorService calls = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "engine-create");
        t.setDaemon(true);
        return t;
      });
      ClosedLoop.Batch b;
      try {
        b = ClosedLoop.run(clients, n, max, i -> ClosedLoop.timed(() -> {
          String id = sku + "-" + i;
          // bounded as a request is: without the ceiling's worker a create would wait forever
          java.util.concurrent.Future<String> f = calls.submit(() -> EngineCeiling.create(client, id, TENANT, sku));
          try {
            return id.equals(f.get(REQUEST_TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
                ? "CREATED" : "WRONG_ANSWER";
          } catch (java.util.concurrent.TimeoutException e) {
            f.cancel(true);
            return ClosedLoop.CLIENT_TIMEOUT;
          } catch (java.util.concurrent.ExecutionException e) {
            return ClosedLoop.failure(e.getCause());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ClosedLoop.CLIENT_TIMEOUT;
          }
        }));
      } finally {
        calls.shutdownNow();
      }
      mark(MARK_END);
      List<Long> created = Stats.latencies(b.results(), "CREATED");
      List<String> broken = new ArrayList<>();
      long wrong = b.results().stream().filter(t -> t.outcome().equals("WRONG_ANSWER")).count();
      if (wrong > 0) broken.add(wrong + " creates answered another workflow's id");
      ClosedLoop.Batch ended = ClosedLoop.run(Math.min(clients, 16), n, Duration.ofMinutes(5),
          i -> ClosedLoop.timed(() -> {
            client.newUntypedWorkflowStub(sku + "-" + i).terminate("engine ceiling: measured");
            return "TERMINATED";
          }));
      long left = ended.results().stream().filter(t -> !t.outcome().equals("TERMINATED")).count();
      Map<String, Double> m = new LinkedHashMap<>();
      m.put("not terminated", (double) left); // a create that never started has nothing to end
      return result("engine", run, clients, b, created.size() / b.seconds(), "workflows/s", created, m, broken,
          List.of("update-with-start, one no-op local activity, 2 attributes upserted, a " + EngineCeiling.HOLD.toMinutes()
              + " min timer; worker in the service JVM"));
    } finally {
      service.shutdownNow();
    }
  }

  // ---------------------------------------------------------------- b2: end to end

  /** create → pay → the channel's callback → PAID, C clients; the window ends when every order is PAID. */
  public ScenarioResult b2(int run, int orders, int stock, int clients, Duration max) throws Exception {
    login();
    String sku = newSku("b2-" + run, stock);
    mark(MARK_START);
    ClosedLoop.Batch b = ClosedLoop.run(clients, orders, max, i -> {
      HttpJson buyer = buyers.get(i % SUBJECTS);
      HttpJson.Reply c;
      try {
        c = buyer.post("/orders", Map.of("request_key", sku + "-" + i, "sku", sku, "quantity", 1));
      } catch (RuntimeException e) { // no answer: this order is not paid, and counted
        return new Timed(CREATE_ + ClosedLoop.failure(e), 0);
      }
      if (!"CREATED".equals(c.text("outcome"))) return new Timed(CREATE_ + outcome(c, "outcome"), 0);
      String id = c.text("order_id");
      Timed pay = ClosedLoop.timed(() -> outcome(buyer.post("/orders/" + id + "/pay", null), "status"));
      // a pay call without an answer is no PAID order the window waits for (it may still become PAID)
      return ClosedLoop.noAnswer(pay.outcome()) ? new Timed(PAY_ + pay.outcome(), pay.nanos()) : pay;
    });
    // the orders whose pay call answered: each must end PAID
    long paying = b.results().stream().filter(t -> answeredPay(t.outcome())).count();
    long t0 = System.nanoTime() - (long) (b.seconds() * 1e9);
    long paid = awaitCount("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", paying, sku);
    // the window closes when the channel's callbacks were applied too (as duplicates of the pay answer)
    long callbacks = awaitCount("SELECT count(*) FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
        + " WHERE o.sku = ? AND n.effect IS NOT NULL", paid, sku);
    double seconds = (System.nanoTime() - t0) / 1e9;
    mark(MARK_END);
    List<String> broken = new ArrayList<>();
    if (paid < paying) broken.add((paying - paid) + " paid orders not PAID after " + CONVERGE.toSeconds() + " s");
    broken.addAll(exactlyOncePaid(sku, false));
    broken.addAll(stock(sku).broken());
    List<Long> pay = new ArrayList<>();
    for (Timed t : b.results()) if (answeredPay(t.outcome())) pay.add(t.nanos());
    Collections.sort(pay);
    Map<String, Double> m = new LinkedHashMap<>();
    m.put("paid", (double) paid);
    m.put("callbacks applied", (double) callbacks);
    return new ScenarioResult("b2", run, clients, b.results().size(), seconds, paid / seconds, "PAID orders/s",
        Stats.pct(pay, 50), Stats.pct(pay, 99), Stats.outcomes(b.results()), m, broken, "",
        List.of("latency = the pay call; stock " + stock));
  }

  private static final String CREATE_ = "CREATE_";
  private static final String PAY_ = "PAY_";

  /** A b2 outcome of a pay call that answered (not a create that failed, not a pay without an answer). */
  private static boolean answeredPay(String outcome) {
    return !outcome.startsWith(CREATE_) && !outcome.startsWith(PAY_);
  }

  // ---------------------------------------------------------------- b3: callback storm

  /**
   * Orders whose channel callbacks are held, then {@code copies} duplicates of each one's CHARGED
   * notice, shuffled, over C connections from wrk (each once; from this JVM's clients when wrk is
   * not on the PATH): accepted/s, applied notices/s, and exactly one PAID effect, transition and
   * ORDER_PAID event per order.
   */
  public ScenarioResult b3(int run, int orders, int copies, int clients) throws Exception {
    login();
    String sku = newSku(stormName(run), orders);
    List<String> setupFailures = Collections.synchronizedList(new ArrayList<>());
    ClosedLoop.Batch setup = ClosedLoop.run(Math.min(clients, orders), orders, Duration.ofMinutes(5), i -> {
      HttpJson buyer = buyers.get(i % SUBJECTS);
      String id;
      try {
        id = buyer.post("/orders", Map.of("request_key", sku + "-" + i, "sku", sku, "quantity", 1)).text("order_id");
      } catch (RuntimeException e) {
        setupFailures.add("CREATE_" + ClosedLoop.failure(e));
        return new Timed(NO_ORDER, 0);
      }
      if (id == null) return new Timed(NOT_CREATED, 0);
      try {
        // the channel answers late and keeps its own callback: only the storm's notices settle the order
        channel.post("/_faults", Map.of("merchant_order", id, "reply_delay_ms", 1200, "hold_callbacks", true));
        buyer.post("/orders/" + id + "/pay", null);
      } catch (RuntimeException e) { // the order joins the storm if the channel has its charge (below)
        setupFailures.add("PAY_" + ClosedLoop.failure(e));
      }
      return new Timed(id, 0);
    });
    List<String> notices = new ArrayList<>();
    long notCreated = 0;
    for (Timed t : setup.results()) {
      String id = t.outcome();
      if (id.equals(NOT_CREATED)) notCreated++;
      if (id.equals(NOT_CREATED) || id.equals(NO_ORDER) || id.startsWith("ERROR_") || ClosedLoop.noAnswer(id)) continue;
      String txn;
      try {
        txn = channel.get("/charges/" + id).text("txn");
      } catch (RuntimeException e) {
        setupFailures.add("CHARGE_" + ClosedLoop.failure(e));
        continue;
      }
      if (txn == null) { // the pay never reached the channel: no charge to notify
        setupFailures.add("NO_CHARGE");
        continue;
      }
      String body = HttpJson.JSON.writeValueAsString(Map.of("notify_id", STORM_NOTICE + sku + "-" + id, "merchant_order", id,
          "kind", "CHARGED", "amount", UNIT_PRICE, "txn", txn));
      for (int k = 0; k < copies; k++) notices.add(body);
    }
    Collections.shuffle(notices, new Random(run));
    int total = notices.size();
    int settled = total / Math.max(1, copies);
    mark(MARK_START);
    String arrivalsOfTheStorm = "SELECT count(*) FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
        + " WHERE o.sku = ?";
    boolean fromWrk = Wrk.onPath() && !notices.isEmpty();
    Storm storm = fromWrk
        ? wrkStorm(notices, clients, () -> count(arrivalsOfTheStorm, sku) >= total) : javaStorm(notices, clients);
    // wrk is interrupted once every notice has its row, with requests still in flight: the service
    // records those after it, so the arrivals are counted once they stopped growing, and every one
    // of them must get its effect (counting them earlier left the late ones out of the wait)
    long applied = awaitCount(arrivalsOfTheStorm + " AND n.effect IS NOT NULL",
        Math.max(storm.answered(), settledCount(arrivalsOfTheStorm, sku)), sku);
    mark(MARK_END);
    // the arrivals, those answered at arrival (their effect came with the INSERT: applied_at =
    // received_at), and the service's own clock: first to last arrival, and to the last effect
    double[] seen = firstRow("SELECT count(*), count(*) FILTER (WHERE n.applied_at = n.received_at),"
        + " extract(epoch FROM max(n.received_at) - min(n.received_at)),"
        + " extract(epoch FROM max(n.applied_at) - min(n.received_at)) FROM payment_notification n"
        + " JOIN orders o ON o.order_id = n.merchant_order WHERE o.sku = ?",
        rs -> new double[] {rs.getLong(1), rs.getLong(2), rs.getDouble(3), rs.getDouble(4)}, sku);
    long arrivals = (long) seen[0];
    long atArrival = (long) seen[1];
    double stormSeconds = fromWrk ? seen[2] : storm.seconds(); // wrk's own time ends at its interrupt
    double applySeconds = seen[3];
    // wrk's counts leave out the answers in flight when a thread stops; every accepted callback has its row
    long accepted = fromWrk ? arrivals : storm.accepted();
    List<String> broken = new ArrayList<>();
    if (!(stormSeconds > 0) || !(applySeconds > 0)) { // one arrival or none: no span to divide by
      broken.add("no storm to time: " + arrivals + " arrivals");
      stormSeconds = Math.max(stormSeconds, 1e-3);
      applySeconds = Math.max(applySeconds, 1e-3);
    }
    List<String> notes = new ArrayList<>(List.of(settled + " orders x " + copies + " copies from " + storm.generator(),
        arrivals + " arrivals, " + atArrival + " answered at arrival, " + (applied - atArrival) + " applied by their workflow"));
    if (notCreated > 0) broken.add(notCreated + " of " + orders + " storm orders were not created");
    if (!setupFailures.isEmpty()) {
      notes.add((orders - settled) + " of " + orders + " orders left out of the storm, setup without an answer "
          + Stats.outcomes(setupFailures.stream().map(f -> new Timed(f, 0)).toList()));
    }
    // a callback without an answer is counted among the outcomes; every answered one must be accepted
    if (fromWrk && arrivals < total) {
      broken.add("the storm was cut at its bound (" + WRK_STORM_BOUND.toSeconds() + " s): " + arrivals + " of " + total + " arrived");
    }
    if (storm.refused() > 0) {
      broken.add(storm.refused() + " of " + storm.requests() + " callbacks not accepted " + storm.outcomes());
    }
    if (applied < accepted) broken.add((accepted - applied) + " accepted notices without an effect after " + CONVERGE.toSeconds() + " s");
    if (applied < arrivals) broken.add((arrivals - applied) + " of " + arrivals + " arrivals without an effect");
    long paidOrders = count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", sku);
    if (paidOrders < settled) broken.add((settled - paidOrders) + " of " + settled + " storm orders not PAID");
    broken.addAll(exactlyOncePaid(sku, true));
    Map<String, Double> m = new LinkedHashMap<>();
    m.put("applied notices/s", applied / applySeconds);
    m.put("apply seconds", applySeconds);
    return new ScenarioResult("b3", run, clients, storm.requests(), stormSeconds, accepted / stormSeconds, "accepted/s",
        storm.p50Ms(), storm.p99Ms(), storm.outcomes(), m, broken, "", notes);
  }

  /**
   * What a storm's generator saw. {@code answered}: callbacks with an answer (each has its row);
   * {@code refused}: answered other than 200 (or, from wrk, a socket error).
   */
  private record Storm(String generator, long requests, long answered, long accepted, long refused,
      double seconds, double p50Ms, double p99Ms, Map<String, Long> outcomes) {}

  /**
   * The storm from wrk, each notice of the list once, in its shuffled order: a generator whose
   * CPU per callback is far below the service's, so the rate is the service's (issue 20: the
   * load JVM spends about as much per callback as the service). Signed as the channel signs.
   */
  private Storm wrkStorm(List<String> notices, int clients, java.util.function.BooleanSupplier allArrived)
      throws Exception {
    String secret = at.callbackSecret();
    long now = System.currentTimeMillis() / 1000; // valid for 300 s; the storm takes seconds
    List<Wrk.SignedCallback> signed = notices.stream().map(body -> Wrk.SignedCallback.of(body, secret, now)).toList();
    Process p = Wrk.callbacksOnce(at.api(), signed, 200, clients, (int) WRK_STORM_BOUND.toSeconds());
    Wrk.Result r;
    try {
      // wrk runs to its duration even once its threads stopped: interrupt it when every notice is in
      while (p.isAlive() && !allArrived.getAsBoolean()) Thread.sleep(20);
      Wrk.interrupt(p);
      r = Wrk.finish(p);
    } finally {
      p.destroyForcibly();
    }
    long refused = r.otherStatus() + r.socketErrors();
    Map<String, Long> outcomes = new LinkedHashMap<>();
    outcomes.put("HTTP_200", r.expectedStatus());
    if (r.otherStatus() > 0) outcomes.put("OTHER_STATUS", r.otherStatus());
    if (r.socketErrors() > 0) outcomes.put("SOCKET_ERROR", r.socketErrors());
    return new Storm(WRK, r.requests(), r.expectedStatus() + r.otherStatus(), r.expectedStatus(), refused,
        r.seconds(), r.p50Ms(), r.p99Ms(), outcomes);
  }

  /** The storm from this JVM's clients, when wrk is not on the PATH. */
  private Storm javaStorm(List<String> notices, int clients) throws Exception {
    ClosedLoop.Batch b = ClosedLoop.run(clients, notices.size(), Duration.ofMinutes(10), i -> callback(notices.get(i)));
    long answered = b.results().stream().filter(t -> !ClosedLoop.noAnswer(t.outcome())).count();
    long accepted = b.results().stream().filter(t -> t.outcome().equals("HTTP_200")).count();
    List<Long> lat = Stats.latencies(b.results(), "HTTP_200");
    return new Storm("the load JVM", notices.size(), answered, accepted, answered - accepted, b.seconds(),
        Stats.pct(lat, 50), Stats.pct(lat, 99), Stats.outcomes(b.results()));
  }

  private static final String WRK = "wrk";
  /**
   * The longest wrk may run: its threads stop sending once the list is sent, and wrk is
   * interrupted once every notice has its row (wrk itself would run to its duration); the storm's
   * time is taken from the arrivals' rows. A storm slower than notices / bound per second is cut,
   * and the scenario says so.
   */
  private static final Duration WRK_STORM_BOUND = Duration.ofSeconds(20);

  private static final String STORM_NOTICE = "ntf-";

  private static String stormName(int run) {
    return "b3-" + run;
  }

  /** What the notify ids of run {@code run}'s storm begin with (its SKU's name is in them). */
  public static String stormNotifyIdPrefix(int run) {
    return STORM_NOTICE + SKU_PREFIX + stormName(run) + "-";
  }

  private static final String NOT_CREATED = "NOT_CREATED";
  private static final String NO_ORDER = "NO_ORDER";

  /** A callback as the channel sends it: signed when the service has a callback secret. */
  private Timed callback(String body) {
    return ClosedLoop.timed(() -> {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(at.api() + "/callbacks/payment"))
          .timeout(REQUEST_TIMEOUT).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofByteArray(bytes));
      String secret = at.callbackSecret();
      if (secret != null && !secret.isBlank()) {
        req.header(CallbackSignatures.HEADER, CallbackSignatures.header(secret, System.currentTimeMillis() / 1000, bytes));
      }
      try {
        return "HTTP_" + raw.send(req.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
      } catch (IOException e) {
        return ClosedLoop.failure(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "ERROR_INTERRUPTED";
      }
    });
  }

  /**
   * Every PAID order of the SKU has exactly one transition to PAID and one ORDER_PAID event, and at
   * most one notice with the effect PAID: exactly one when only notices could pay it (b3), none
   * when the pay call's answer did it first and the callback came as a duplicate (b2).
   */
  private List<String> exactlyOncePaid(String sku, boolean paidByNotice) {
    return firstRow("SELECT count(*), count(*) FILTER (WHERE transitions <> 1), count(*) FILTER (WHERE events <> 1),"
        + " count(*) FILTER (WHERE effects > 1), count(*) FILTER (WHERE effects = 0) FROM ("
        + " SELECT (SELECT count(*) FROM order_transition t WHERE t.order_id = o.order_id AND t.to_status = 'PAID') transitions,"
        + "  (SELECT count(*) FROM outbox e WHERE e.order_id = o.order_id AND e.event_type = 'ORDER_PAID') events,"
        + "  (SELECT count(*) FROM payment_notification n WHERE n.merchant_order = o.order_id AND n.effect = 'PAID') effects"
        + " FROM orders o WHERE o.tenant = ? AND o.sku = ? AND o.status = 'PAID') per_order", rs -> {
          List<String> broken = new ArrayList<>();
          long paid = rs.getLong(1);
          if (rs.getLong(2) > 0) broken.add(rs.getLong(2) + " of " + paid + " PAID orders without exactly one transition to PAID");
          if (rs.getLong(3) > 0) broken.add(rs.getLong(3) + " of " + paid + " PAID orders without exactly one ORDER_PAID event");
          if (rs.getLong(4) > 0) broken.add(rs.getLong(4) + " of " + paid + " PAID orders with more than one PAID effect");
          if (paidByNotice && rs.getLong(5) > 0) broken.add(rs.getLong(5) + " of " + paid + " PAID orders without a PAID effect");
          return broken;
        }, TENANT, sku);
  }

  // ---------------------------------------------------------------- reconcile

  /** The admin credential of a service that is not the local default (FLASHSALE_ADMIN_TOKEN), else none. */
  private static String adminToken() {
    String token = System.getenv("FLASHSALE_ADMIN_TOKEN");
    return token == null || token.isBlank() ? null : token;
  }

  /** The reconcile task's verdict once pending orders converged (bounded wait): "clean" or the findings. */
  public Reconciled reconcile(Duration bound) throws InterruptedException {
    return reconcile(new HttpJson(at.admin(), adminToken(), RECONCILE_TIMEOUT), bound);
  }

  public static Reconciled reconcile(HttpJson admin, Duration bound) throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (true) {
      HttpJson.Reply r;
      try {
        r = admin.post("/tasks/reconcile?format=json", null);
      } catch (RuntimeException e) { // no answer: try again until the bound, then say so
        if (System.nanoTime() > deadline) {
          return new Reconciled(false, "reconcile task gave no answer: " + ClosedLoop.failure(e));
        }
        Thread.sleep(500);
        continue;
      }
      if (r.status() != 200 || r.body() == null) return new Reconciled(false, "reconcile task answered " + r.status() + " " + r.raw());
      JsonNode b = r.body();
      int mismatches = b.path("mismatches").size();
      int pending = b.path("pending").asInt();
      long drift = b.path("drift").asLong();
      boolean clean = mismatches == 0 && drift == 0;
      if ((clean && pending == 0) || System.nanoTime() > deadline) {
        if (clean && pending == 0) return new Reconciled(true, "clean");
        String first = mismatches == 0 ? "" : " first: " + b.path("mismatches").get(0).asText();
        return new Reconciled(clean, "mismatches=" + mismatches + " pending=" + pending + " drift=" + drift + first
            + " (" + b.path("summary").asText() + ")");
      }
      Thread.sleep(500);
    }
  }

  /** @param clean no mismatches and no drift (pending orders alone are a finding, not a broken invariant) */
  public record Reconciled(boolean clean, String verdict) {}

  // ---------------------------------------------------------------- the database side

  /**
   * A SKU's stock: conservation (remaining + held + confirmed = total) and oversell (more live
   * orders than units).
   */
  record Stock(long total, long remaining, long heldOrConfirmed, long orderRows, long liveOrders) {
    long oversell() {
      return Math.max(0, liveOrders - total);
    }

    List<String> broken() {
      List<String> b = new ArrayList<>();
      if (remaining < 0) b.add("remaining " + remaining + " < 0");
      if (remaining + heldOrConfirmed != total) {
        b.add("conservation: remaining " + remaining + " + held/confirmed " + heldOrConfirmed + " != total " + total);
      }
      if (oversell() > 0) b.add("oversell " + oversell() + ": " + liveOrders + " live orders for " + total + " units");
      return b;
    }
  }

  private Stock stock(String sku) {
    return firstRow("SELECT s.total, s.remaining,"
        + " (SELECT coalesce(sum(quantity), 0) FROM reservation r WHERE r.tenant = s.tenant AND r.sku = s.sku"
        + "   AND r.status IN ('HELD', 'CONFIRMED')),"
        + " (SELECT count(*) FROM orders o WHERE o.tenant = s.tenant AND o.sku = s.sku),"
        + " (SELECT coalesce(sum(quantity), 0) FROM orders o WHERE o.tenant = s.tenant AND o.sku = s.sku"
        + "   AND o.status NOT IN ('CANCELLED', 'FAILED', 'REFUNDED'))"
        + " FROM sku s WHERE s.tenant = ? AND s.sku = ?",
        rs -> new Stock(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)), TENANT, sku);
  }

  /**
   * A fresh SKU through the admin task, as an operator creates one. Its name is unique to this
   * load JVM, and request keys start with it: a key reused across runs would answer KEY_REUSED.
   */
  private String newSku(String name, int total) {
    return newSku(name, total, 1_000_000);
  }

  private static final String SKU_PREFIX = "bench-";

  private String newSku(String name, int total, int perUserLimit) {
    String sku = SKU_PREFIX + name + "-" + tag;
    HttpJson.Reply r = admin.post("/tasks/sku?tenant=" + TENANT + "&sku=" + sku + "&total=" + total + "&unit_price="
        + UNIT_PRICE + "&per_user_limit=" + perUserLimit, null);
    if (r.status() != 200) throw new IllegalStateException("creating SKU " + sku + ": " + r.status() + " " + r.raw());
    return sku;
  }

  /** A throwaway SKU of the ceilings, with its orders (they never had a workflow). */
  private void deleteSku(String sku) {
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
  private long settledCount(String sql, String arg) throws InterruptedException {
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

  private long awaitCount(String sql, long expected, String arg) throws InterruptedException {
    long deadline = System.nanoTime() + CONVERGE.toNanos();
    long n;
    while ((n = count(sql, arg)) < expected && System.nanoTime() < deadline) Thread.sleep(20);
    return n;
  }

  private long count(String sql, Object... args) {
    return firstRow(sql, rs -> rs.getLong(1), args);
  }

  /** Reads one row of a check query (which always has one: an aggregate, or the SKU just made). */
  private <T> T firstRow(String sql, Row<T> reader, Object... args) {
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

  private interface Row<T> {
    T read(ResultSet rs) throws java.sql.SQLException;
  }

  private ScenarioResult result(String scenario, int run, int clients, ClosedLoop.Batch b, double rate, String unit,
      List<Long> headline, Map<String, Double> metrics, List<String> broken, List<String> notes) {
    return new ScenarioResult(scenario, run, clients, b.results().size(), b.seconds(), rate, unit,
        Stats.pct(headline, 50), Stats.pct(headline, 99), Stats.outcomes(b.results()), metrics, broken, "", notes);
  }

  private void mark(String what) {
    out.println(what);
    out.flush();
  }

  @Override
  public void close() {
    checks.close();
  }
}
