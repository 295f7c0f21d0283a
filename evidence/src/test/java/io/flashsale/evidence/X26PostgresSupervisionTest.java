package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.devstack.EmbeddedStack;
import io.flashsale.devstack.SupervisedPostgres;
import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the local PostgreSQL's postmaster is SIGKILLed under a running service in the middle of a
 * contended sale (more buyers than units, creating and paying), as an OOM killer would. Nobody
 * restarts it by hand: the service's supervisor starts it again on the same data directory and
 * port. While it is down every request that needs the database answers 503 with Retry-After and
 * /healthcheck reports the database unhealthy; afterwards the sale sells out exactly, no unit is
 * sold twice, and reconcile is clean.
 *
 * <p>So that the outage lasts until the experiment has probed it (and not only as long as the
 * scheduler happens to allow), one backend of the killed postmaster is held stopped (SIGSTOP): a
 * new postmaster refuses the data directory while any process of the old one holds its shared
 * memory, so the supervisor's start keeps failing until the backend is let go (SIGCONT), notices
 * its postmaster died, and exits. That is the recovery path of a backend slow to exit, taken on
 * purpose.
 */
class X26PostgresSupervisionTest {
  @RegisterExtension static final Stack stack = new Stack()
      .with("database.superviseEmbedded", true)
      // no reservation may expire while its pay waits out the outage: the sale must sell out exactly
      .with("orders.reservationTtl", "3m");
  @RegisterExtension static final Evidence ev = new Evidence("X-26",
      "PostgreSQL SIGKILL under the service → supervisor restarts it; 503 + Retry-After meanwhile, sold out exactly");

  private static final String SKU = "sku-x26";
  private static final String PROBE_SKU = "sku-x26-probe";
  private static final int BUYERS = 40;
  private static final int STOCK = 24;
  private static final Set<String> UNAVAILABLE = Set.of("DATABASE_UNAVAILABLE", "ENGINE_UNAVAILABLE", "OVERLOADED");

  /** One answer a buyer got: the call, its HTTP status, the code or status it carried, whether it had Retry-After. */
  private record Answer(String call, int status, String code, boolean retryAfter, String raw) {
    String kind() {
      return call + " " + status + " " + code;
    }
  }

  private static final List<Answer> answers = Collections.synchronizedList(new ArrayList<>());
  private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static Answer post(String call, String token, String path, String body, String idempotencyKey) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + path))
        .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + token)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (idempotencyKey != null) b.header("Idempotency-Key", idempotencyKey);
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    JsonNode json = r.body().isBlank() ? null : HttpJson.JSON.readTree(r.body());
    String code = json == null ? "-" : json.has("code") ? json.path("code").asText()
        : json.has("outcome") && !json.path("outcome").isNull() ? json.path("outcome").asText() : json.path("status").asText();
    return new Answer(call, r.statusCode(), code, r.headers().firstValue("Retry-After").isPresent(), r.body());
  }

  /** Sends until the answer is not a 503 (at most about 180 s), as a client honouring Retry-After would; every answer is recorded. */
  private static Answer untilNot503(String call, String token, String path, String body, String key) throws Exception {
    long deadline = System.currentTimeMillis() + 180_000;
    while (true) {
      Answer a = post(call, token, path, body, key);
      answers.add(a);
      if (a.status() != 503 || System.currentTimeMillis() > deadline) return a;
      Thread.sleep(500);
    }
  }

  private static boolean madeOrReplayed(Answer a) {
    return a.status() == 201 && a.code().equals("CREATED") || a.status() == 200 && a.code().equals("REPLAY");
  }

  /** A buyer: one unit with its request key; paid with an Idempotency-Key if it got one. */
  private static String buy(int i, String token) throws Exception {
    String body = HttpJson.JSON.writeValueAsString(Buyers.order("x26-" + i, SKU, 1));
    Answer created = untilNot503("create", token, "/orders", body, null);
    // a create answered 503 may have made its order all the same: sent again, it is that order's replay
    if (!madeOrReplayed(created)) return null;
    String id = HttpJson.JSON.readTree(created.raw()).path("order_id").asText();
    untilNot503("pay", token, "/orders/" + id + "/pay", "", "x26-pay-" + i);
    return id;
  }

  /** /healthcheck on the admin port: its HTTP status and body. */
  private static HttpJson.Reply health() {
    return stack.admin.get("/healthcheck");
  }

  private static boolean healthy(HttpJson.Reply r, String check) {
    return r.body() != null && r.body().path(check).path("healthy").asBoolean(false);
  }

  private static void signal(String name, long pid) throws Exception {
    int exit = new ProcessBuilder("kill", "-" + name, String.valueOf(pid)).inheritIO().start().waitFor();
    if (exit != 0) throw new IllegalStateException("kill -" + name + " " + pid + " exited " + exit);
  }

  @Test
  void postgresKilledUnderTheServiceIsRestartedByItsSupervisor() throws Exception {
    stack.sku(SKU, STOCK, 1);
    stack.sku(PROBE_SKU, 5, 1);
    List<String> tokens = new ArrayList<>();
    for (int i = 0; i < BUYERS; i++) tokens.add(stack.api.login("t1", "user-x26-" + i).token());
    String probeToken = stack.api.login("t1", "user-x26-probe").token();
    SupervisedPostgres pg = EmbeddedStack.of(stack.wiring.stack()).postgres();
    ev.check(healthy(health(), "postgresql-process") && healthy(health(), "postgresql"), "healthy before the kill");
    int port = pg.port();

    // /healthcheck polled all along, as a process manager would
    AtomicBoolean polling = new AtomicBoolean(true);
    List<Boolean> processHealth = Collections.synchronizedList(new ArrayList<>());
    Thread poller = new Thread(() -> {
      while (polling.get()) {
        processHealth.add(healthy(health(), "postgresql-process"));
        try {
          Thread.sleep(250);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "x26-health");
    poller.start();

    ExecutorService crowd = Executors.newFixedThreadPool(10);
    List<Future<String>> buyers = new ArrayList<>();
    long start = System.currentTimeMillis();
    for (int i = 0; i < BUYERS; i++) {
      int k = i;
      buyers.add(crowd.submit(() -> {
        Thread.sleep(k * 150L); // the crowd arrives over about 6 s: before, during and after the kill
        return buy(k, tokens.get(k));
      }));
    }
    Thread.sleep(1_500);

    long killed = pg.pid();
    Connection held = DriverManager.getConnection(stack.wiring.jdbcUrl());
    long backend;
    try (Statement st = held.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      backend = rs.getLong(1);
    }
    signal("STOP", backend);
    long down;
    Answer probe;
    HttpJson.Reply unhealthy;
    try {
      signal("KILL", killed);
      down = System.currentTimeMillis();
      ev.note("STAGE SIGKILL of postmaster " + killed + " at +" + (down - start) + " ms (port " + port
          + "); backend " + backend + " held stopped");
      stack.awaitTrue(() -> !pg.state().up(), 30_000, "the supervisor never saw the postmaster die");

      probe = post("probe", probeToken, "/orders",
          HttpJson.JSON.writeValueAsString(Buyers.order("x26-probe", PROBE_SKU, 1)), null);
      ev.note("a create while PostgreSQL is down: " + probe.status() + " " + probe.raw());
      ev.check(probe.status() == 503 && UNAVAILABLE.contains(probe.code()) && probe.retryAfter(),
          "a create while PostgreSQL is down answers 503 with Retry-After and an error code");
      unhealthy = health();
      ev.note("/healthcheck while PostgreSQL is down: " + unhealthy.status() + " postgresql-process="
          + unhealthy.body().path("postgresql-process") + " postgresql=" + unhealthy.body().path("postgresql").path("message"));
      ev.check(unhealthy.status() == 500 && !healthy(unhealthy, "postgresql-process") && !healthy(unhealthy, "postgresql"),
          "/healthcheck answers 500 with the database unhealthy while it is down");
    } finally {
      signal("CONT", backend); // it notices that its postmaster died and exits; then the start goes through
      try {
        held.close();
      } catch (java.sql.SQLException broken) {
        // its backend is gone
      }
    }

    stack.awaitTrue(() -> pg.state().up() && pg.pid() != killed, 120_000, "PostgreSQL was not started again");
    long back = System.currentTimeMillis();
    ev.note("the supervisor started PostgreSQL again: postmaster " + pg.pid() + " on port " + pg.port() + ", "
        + (back - down) + " ms after the kill, no manual step");
    ev.check(pg.pid() != killed && pg.port() == port && pg.state().restarts() == 1,
        "a new postmaster on the same port, started by the supervisor (one restart)");
    stack.awaitTrue(() -> health().status() == 200, 60_000, "/healthcheck not healthy again");
    ev.check(true, "/healthcheck healthy again after the restart");

    List<String> ids = new ArrayList<>();
    for (Future<String> f : buyers) {
      String id = f.get(300, TimeUnit.SECONDS);
      if (id != null) ids.add(id);
    }
    crowd.shutdown();
    Answer probeAgain = untilNot503("probe", probeToken, "/orders",
        HttpJson.JSON.writeValueAsString(Buyers.order("x26-probe", PROBE_SKU, 1)), null);
    ev.check(madeOrReplayed(probeAgain), "the probe's create, sent again with its key after the restart, has its order"
        + " (201 CREATED, or 200 REPLAY when the refused call had made it): " + probeAgain.status() + " " + probeAgain.code());
    String probeOrder = HttpJson.JSON.readTree(probeAgain.raw()).path("order_id").asText();
    untilNot503("pay", probeToken, "/orders/" + probeOrder + "/pay", "", "x26-probe-pay");
    polling.set(false);
    poller.join(30_000);
    ev.note("the crowd finished " + (System.currentTimeMillis() - start) + " ms after it started");

    long unhealthyPolls = processHealth.stream().filter(h -> !h).count();
    ev.note("/healthcheck polls: " + processHealth.size() + ", with the postmaster reported down: " + unhealthyPolls);
    Map<String, Integer> kinds = new TreeMap<>();
    for (Answer a : answers) kinds.merge(a.kind(), 1, Integer::sum);
    ev.note("answers " + kinds);
    long unavailable = answers.stream().filter(a -> a.status() == 503).count();
    ev.note("503 answers during the outage: " + unavailable + " (each retried with the same key)");
    List<Answer> wrong = new ArrayList<>();
    for (Answer a : answers) {
      boolean ok = switch (a.status()) {
        case 503 -> UNAVAILABLE.contains(a.code()) && a.retryAfter();
        case 201 -> a.call().equals("create") || a.call().equals("probe");
        case 409 -> a.call().equals("create") && a.code().equals("SOLD_OUT");
        case 200 -> a.call().equals("pay") && (a.code().equals("PAID") || a.code().equals("UNKNOWN"))
            || !a.call().equals("pay") && a.code().equals("REPLAY");
        default -> false;
      };
      if (!ok) wrong.add(a);
    }
    ev.check(wrong.isEmpty(), "every answer is 201, 200 REPLAY of a create, 409 SOLD_OUT, 200 PAID/UNKNOWN, or 503 with Retry-After and an"
        + " error code: no 500" + (wrong.isEmpty() ? "" : "; wrong: " + wrong));

    ev.equal(STOCK, ids.size(), "as many buyers got an order as there were units");
    ev.equal((long) (BUYERS - STOCK), answers.stream().filter(a -> a.status() == 409).count(),
        "every other buyer was told SOLD_OUT");
    stack.awaitNothingPending(120_000);
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE request_key LIKE 'x26-%'"
        + " AND sku = ? AND status = 'PAID'", SKU) == STOCK, 60_000, "not every order PAID");
    ev.equal(Map.of("PAID", STOCK), stack.sql.histogram("SELECT status FROM orders WHERE sku = '" + SKU + "'"),
        "every order of the sale converged to PAID");
    for (String id : ids) {
      ev.check(stack.sql.count("SELECT count(*) FROM order_transition WHERE order_id = ? AND to_status = 'PAID'", id) == 1
          && "CHARGED".equals(stack.channel.get("/charges/" + id).text("status"))
          && Buyers.chargeRequests(stack.channel, id) == 1,
          id + ": one PAID transition, one charge request, CHARGED");
    }
    long confirmed = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE tenant = 't1' AND sku = ?"
        + " AND status = 'CONFIRMED'", SKU);
    long held2 = stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE tenant = 't1' AND sku = ?"
        + " AND status = 'HELD'", SKU);
    int remaining = stack.sql.remaining(SKU);
    ev.note("stock " + STOCK + " for " + BUYERS + " buyers: remaining " + remaining + ", confirmed " + confirmed
        + ", held " + held2);
    ev.equal((long) STOCK, confirmed, "sold out exactly: one confirmed unit per unit on sale, none twice (no oversell)");
    ev.equal(0, remaining, "nothing left");
    ev.equal((long) STOCK, remaining + confirmed + held2, "conservation: remaining + confirmed + held = total");
    stack.checkReconcileClean(ev, "reconcile clean after the restart");
  }
}
