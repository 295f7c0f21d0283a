package io.flashsale.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.launcher.cli.HttpJson;
import java.io.PrintStream;
import java.time.Duration;

/**
 * The load scenarios, driven from their own JVM like any client: HTTP to the API, the admin port
 * and the channel stub; JDBC only for the ceiling (jdbc, pgbench) and for checking invariants.
 * Every scenario prints "MARK start" / "MARK end" around its measured window (the bench samples
 * CPU there) and returns one {@link ScenarioResult}.
 *
 * <p>Each scenario is its own class ({@link B1Scenario}, {@link B1SoldOutScenario}, {@link
 * JdbcScenario}, {@link PgbenchScenario}, {@link EngineScenario}, {@link B2Scenario}, {@link
 * B3Scenario}, {@link B4Scenario}) on the clients and checks they share ({@link LoadContext}); the
 * invariants they check after the window are {@link Invariants}. This class is their entry point
 * and the reconcile task's client.
 */
public final class Load implements AutoCloseable {
  public static final String MARK_START = "MARK start";
  public static final String MARK_END = "MARK end";
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

  private final LoadContext ctx;

  /** Arrivals per second of b1 and b1-sold-out; 0: a closed loop of the scenario's clients. */
  private double openRate;

  public Load(Endpoints at, PrintStream out) {
    this.ctx = new LoadContext(at, out);
  }

  /** The storms rotate over {@code n} distinct buyers, one login each. */
  public Load stormBuyers(int n) {
    if (n < 1) throw new IllegalArgumentException("--storm-buyers must be at least 1");
    ctx.stormBuyers = n;
    return this;
  }

  /** B1 and B1 sold out as an open loop at {@code perSecond} arrivals (0: closed loop). */
  public Load openLoop(double perSecond) {
    this.openRate = perSecond;
    return this;
  }

  /** B1: N requests, distinct keys, the storm's buyers in turn, one SKU of {@code stock} units. */
  public ScenarioResult b1(int run, int n, int stock, int clients, Duration max) throws Exception {
    return new B1Scenario(ctx, openRate).run(run, n, stock, clients, max);
  }

  /** Requests against a SKU with nothing left (total 0): the cheap gate's answer. */
  public ScenarioResult b1SoldOut(int run, int n, int clients, Duration max) throws Exception {
    return new B1SoldOutScenario(ctx, openRate).run(run, n, clients, max);
  }

  /** The same admission straight over JDBC on a pool of {@code poolSize} connections. */
  public ScenarioResult jdbc(int run, int n, int clients, int poolSize, Duration max) throws Exception {
    return new JdbcScenario(ctx).run(run, n, clients, poolSize, max);
  }

  /** pgbench on the admission's statements, at the same client count. */
  public ScenarioResult pgbench(int run, int clients, int seconds) throws Exception {
    return new PgbenchScenario(ctx).run(run, clients, seconds);
  }

  /** B4, the crowd: {@code n} buyers arriving within {@code arrivalSeconds} for {@code units}. */
  public ScenarioResult b4(int run, int n, int units, double arrivalSeconds, Duration max) throws Exception {
    return new B4Scenario(ctx).run(run, n, units, arrivalSeconds, max);
  }

  /** The engine ceiling: N order-shaped workflows by update-with-start at C clients. */
  public ScenarioResult engine(int run, int n, int clients, Duration max) throws Exception {
    return new EngineScenario(ctx).run(run, n, clients, max);
  }

  /** B2: create → pay → the channel's callback → PAID, C clients. */
  public ScenarioResult b2(int run, int orders, int stock, int clients, Duration max) throws Exception {
    return new B2Scenario(ctx).run(run, orders, stock, clients, max);
  }

  /** B3: {@code copies} signed duplicates of each of {@code orders} orders' CHARGED notice, shuffled. */
  public ScenarioResult b3(int run, int orders, int copies, int clients) throws Exception {
    return new B3Scenario(ctx).run(run, orders, copies, clients);
  }

  /** What the notify ids of run {@code run}'s storm begin with (its SKU's name is in them). */
  public static String stormNotifyIdPrefix(int run) {
    return B3Scenario.stormNotifyIdPrefix(run);
  }

  // ---------------------------------------------------------------- reconcile

  /** The reconcile task's verdict once pending orders converged (bounded wait): "clean" or the findings. */
  public Reconciled reconcile(Duration bound) throws InterruptedException {
    return reconcile(new HttpJson(ctx.at.admin(), LoadContext.adminToken(), RECONCILE_TIMEOUT), bound);
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

  @Override
  public void close() {
    ctx.close();
  }
}
