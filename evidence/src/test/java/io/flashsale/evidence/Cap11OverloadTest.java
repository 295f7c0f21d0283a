package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-11: admission is bounded. With one create of a buyer stuck and room for another, a second
 * create of the same buyer gets 429 CREATES_PER_PRINCIPAL with Retry-After (its share is 1), leaves
 * no row, and goes through once the first is done. With room for 2 creates in flight and both stuck (the SKU row is
 * locked by the test), 10 more creates are answered 503 OVERLOADED with Retry-After while the two
 * are still waiting — they are refused, not queued: each is answered while the two admitted ones
 * still wait on the lock, and no slower than a few times a plain request to the same API measured
 * right before it (so a refusal that waited in a queue for a while shows up on any machine) — and
 * leave no row. Retried later with the same keys, they go through.
 */
@Tag("engine-independent") // its claim is about the API's admission control, the same on either engine
class Cap11OverloadTest {
  @RegisterExtension static final Stack stack = new Stack().with("maxCreatesInFlight", 2)
      .with("maxCreatesInFlightPerPrincipal", 1);
  @RegisterExtension static final Evidence ev = new Evidence("CAP-11", "a full admission queue answers 503; one principal's share 429");

  /** A refusal may be this many times slower than the slowest plain read beside it. */
  private static final long REFUSAL_FACTOR = 10;
  /** The read's time is floored at this, so a few fast reads cannot shrink the bound to nothing. */
  private static final long BASELINE_FLOOR_MS = 100;

  @Test
  void fullAdmissionAnswers503() throws Exception {
    stack.sku("sku-cap11", 20, 3);
    List<HttpJson> buyers = new ArrayList<>();
    for (int i = 0; i < 12; i++) buyers.add(stack.api.login("t1", String.format("user-c11%02d", i)));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<HttpJson.Reply>> stuck = new ArrayList<>();
    Map<String, Integer> refused = new TreeMap<>();
    List<Long> millis = new ArrayList<>();
    List<Long> baselineMillis = new ArrayList<>();
    List<String> retryAfter = new ArrayList<>();
    HttpClient http = HttpClient.newHttpClient();
    boolean stillWaiting;
    // a queued create would be answered only once the lock goes: the timeout turns that into a failure
    java.time.Duration requestTimeout = java.time.Duration.ofSeconds(30);
    try (Connection lock = stack.db().dataSource().getConnection()) {
      lock.setAutoCommit(false);
      lock.createStatement().execute("LOCK TABLE sku IN EXCLUSIVE MODE"); // reads pass, the reserve waits
      stuck.add(pool.submit(() -> Buyers.create(buyers.get(0), "cap11-0", "sku-cap11", 1)));
      stack.awaitBlockedOnLock("UPDATE sku", 15_000);
      // one place of two is taken, by buyer 0: its second create is over its share, not over the bound
      HttpJson.Reply second = Buyers.create(buyers.get(0), "cap11-share", "sku-cap11", 1);
      ev.note("buyer 0's second create while its first waits: " + second.status() + " " + second.raw()
          + ", Retry-After " + second.headers().firstValue("Retry-After").orElse("(none)"));
      ev.check(second.status() == 429 && second.raw().contains("CREATES_PER_PRINCIPAL")
              && second.headers().firstValue("Retry-After").orElse("").matches("[1-9][0-9]*"),
          "a buyer's second create while its first is in flight → 429 CREATES_PER_PRINCIPAL with Retry-After");
      stuck.add(pool.submit(() -> Buyers.create(buyers.get(1), "cap11-1", "sku-cap11", 1)));
      stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
          + " AND query LIKE 'UPDATE sku%'") == 2, 15_000, "two creates not in flight");
      for (int i = 2; i < 12; i++) {
        // the baseline: a plain read (a 404 for an order that does not exist), same API, same moment
        long b0 = System.nanoTime();
        http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + "/orders/ord-cap11-none"))
            .header("Authorization", "Bearer " + buyers.get(i).token()).timeout(requestTimeout).GET().build(),
            HttpResponse.BodyHandlers.ofString());
        baselineMillis.add((System.nanoTime() - b0) / 1_000_000);
        String body = HttpJson.JSON.writeValueAsString(Buyers.order("cap11-" + i, "sku-cap11", 1));
        long t0 = System.nanoTime();
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + "/orders"))
            .header("Authorization", "Bearer " + buyers.get(i).token())
            .header("Content-Type", "application/json").timeout(requestTimeout)
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        millis.add((System.nanoTime() - t0) / 1_000_000);
        retryAfter.add(r.headers().firstValue("Retry-After").orElse("(none)"));
        String key = r.statusCode() + " " + HttpJson.JSON.readTree(r.body()).path("outcome").asText();
        refused.merge(key, 1, Integer::sum);
      }
      stillWaiting = stuck.stream().noneMatch(Future::isDone);
      lock.commit();
    }
    ev.note("answers while full " + refused);
    ev.equal(Map.of("503 OVERLOADED", 10), refused, "10 creates refused with 503 OVERLOADED");
    long slowest = millis.stream().mapToLong(Long::longValue).max().orElseThrow();
    long slowestBaseline = baselineMillis.stream().mapToLong(Long::longValue).max().orElseThrow();
    long refusalBound = REFUSAL_FACTOR * Math.max(slowestBaseline, BASELINE_FLOOR_MS);
    ev.note("503 answer times (ms) " + millis + ", slowest " + slowest + " ms; a plain read just before each (ms) "
        + baselineMillis + ", slowest " + slowestBaseline + " ms");
    ev.check(slowest <= refusalBound, "every 503 came back no slower than " + REFUSAL_FACTOR + " x the slowest plain read"
        + " (at least " + BASELINE_FLOOR_MS + " ms) measured beside it: " + slowest + " <= " + refusalBound + " ms");
    ev.check(stillWaiting,
        "the 10 were answered while the two admitted creates still waited on the lock: refused, not queued behind them");
    ev.note("Retry-After headers " + new java.util.TreeSet<>(retryAfter));
    ev.check(retryAfter.stream().allMatch(v -> v.matches("[1-9][0-9]*")),
        "every 503 carries Retry-After with a whole number of seconds");
    for (Future<HttpJson.Reply> f : stuck) ev.equal(201, f.get().status(), "an admitted create completes once unblocked");
    ev.equal(2L, stack.sql.count("SELECT count(*) FROM orders WHERE sku = 'sku-cap11'"), "refused creates left no row");
    ev.equal(201, Buyers.create(buyers.get(0), "cap11-share", "sku-cap11", 1).status(),
        "buyer 0's second create, sent again once its first is done, succeeds");
    for (int i = 2; i < 12; i++) {
      ev.equal(201, Buyers.create(buyers.get(i), "cap11-" + i, "sku-cap11", 1).status(), "retry " + i + " succeeds");
    }
    pool.shutdown();
    stack.checkReconcileClean(ev, "reconcile clean");
  }
}
