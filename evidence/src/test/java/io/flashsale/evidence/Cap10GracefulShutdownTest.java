package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-10: the service (API, activity worker, relay; in its own JVM, against this stack's
 * PostgreSQL, Temporal and channel) gets SIGTERM while a pay request is in flight (its charge held
 * at the channel), an event stream is open, and its worker still runs another order's charge (that
 * order was paid through another API process). The in-flight pay gets its answer (PAID); a new
 * request during the drain is refused; the stream ends at once; the worker finishes the other
 * charge before the process exits; the pools close; the process exits 0 within a bound and logs
 * its exit record. After the restart no order is without its workflow, the other order is PAID
 * from the charge the old worker finished (no UNKNOWN), and a stop with nothing in flight is clean
 * too.
 */
class Cap10GracefulShutdownTest {
  // the activities run in the service under test; the workflows too on the dev server (see workerProperties)
  @RegisterExtension static final Stack stack = new Stack().with("workerActivities", false);
  @RegisterExtension static final Evidence ev = new Evidence("CAP-10",
      "SIGTERM: in-flight answered, new refused, worker drained, pools closed, exit 0, no orphan after restart");

  private static final String SKU = "sku-cap10";
  /**
   * B's charge reply: it outlasts A's, so the worker still runs it when the drain is over. As long
   * as the charge activity's 10 s timeout and the channel timeout below it allow.
   */
  private static final long B_REPLY_MS = 8_500;
  /** The service's channel timeout: above B's reply, below the charge activity's 10 s. */
  private static final long CHANNEL_TIMEOUT_MS = 9_500;
  /**
   * A's charge reply: A's pay request is in flight this long, which must cover SIGTERM, the
   * service's stop log and a refused probe; on an idle machine they take well under a second.
   */
  private static final long A_REPLY_MS = 4_000;
  /** Deadlines for conditions (a log line, a refusal, the stream's end): generous, not speed bounds. */
  private static final long CONDITION_DEADLINE_MS = 30_000;
  private static final long EXIT_BOUND_MS = 30_000;
  /** The service starts twice: compiled code that starts fast is enough for a few requests. */
  private static final java.util.List<String> FAST_START = java.util.List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

  private static Map<String, String> serviceProperties(int api, int admin) {
    // the charge may take B_REPLY_MS: the channel timeout is above it, below the activity's 10 s
    Map<String, String> p = new LinkedHashMap<>(stack.workerProperties(CHANNEL_TIMEOUT_MS));
    p.put("dw.server.applicationConnectors[0].port", String.valueOf(api));
    p.put("dw.server.adminConnectors[0].port", String.valueOf(admin));
    p.put("dw.auth.secret", java.util.HexFormat.of().formatHex(new java.security.SecureRandom().generateSeed(32)));
    p.put("dw.auth.devLogin", "true");
    p.put("dw.auth.devLoginOutsideLocalDefault", "true"); // a test instance: its tokens come from dev login
    p.put("dw.channel.callbackSecret", stack.wiring.callbackSecret());
    p.put("dw.relay.consumerUrl", stack.wiring.consumer().url());
    p.put("dw.consumer.deliverySecret", stack.wiring.deliverySecret()); // its relay signs for the stack's consumer
    p.put("dw.consumer.enabled", "false");
    p.put("dw.seed.enabled", "false");
    return p;
  }

  @Test
  void sigtermDrainsAndExitsClean() throws Exception {
    stack.sku(SKU, 10, 3);
    int api = Stack.freePortForChild();
    int admin = Stack.freePortForChild();
    Map<String, String> props = serviceProperties(api, admin);
    HttpJson service = new HttpJson("http://127.0.0.1:" + api, null);
    String a;
    String b;
    try (ChildJvm first = ChildJvm.start("cap10-service-1", FAST_START, props, "server", "embedded.yml")) {
      first.awaitLog("=== flashsale is up ===", 120_000);
      HttpJson buyer = service.login("t1", "user-cap10-1");

      // B: paid through the other API process (this test's); its charge runs in the service's worker
      HttpJson other = stack.api.login("t1", "user-cap10-2");
      b = Buyers.create(other, "cap10-b", SKU, 1).text("order_id");
      Buyers.fault(stack.channel, b, Map.of("reply_delay_ms", B_REPLY_MS, "hold_callbacks", true));
      CompletableFuture<HttpJson.Reply> payB = CompletableFuture.supplyAsync(() -> Buyers.pay(other, b));
      stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, b) == 1, 15_000, "B's charge never reached the channel");
      long bCharged = System.currentTimeMillis();

      // A: an event stream open, and its pay in flight at SIGTERM
      a = Buyers.create(buyer, "cap10-a", SKU, 1).text("order_id");
      Buyers.fault(stack.channel, a, Map.of("reply_delay_ms", A_REPLY_MS, "hold_callbacks", true));
      SseClient events = SseClient.open(api, "/orders/" + a + "/events", buyer.token(), null);
      ev.equal(200, events.status(), "an event stream on A is open");
      CompletableFuture<HttpJson.Reply> payA = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, a));
      stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, a) == 1, 15_000, "A's charge never reached the channel");
      ev.equal("PAYING", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", b), "B is PAYING at SIGTERM");
      ev.check(!payB.isDone(), "B's charge is running in the service's worker at SIGTERM");
      ev.check(!payA.isDone(), "A's pay request is in flight at SIGTERM");

      long sigterm = System.currentTimeMillis();
      first.sigterm();
      ev.note("STAGE SIGTERM to pid " + first.pid() + ", " + (sigterm - bCharged) + " ms after B's charge was sent");
      first.awaitLog("SIGTERM: stopping", CONDITION_DEADLINE_MS);
      String refused = null;
      boolean aInFlightWhenRefused = false;
      long deadline = System.currentTimeMillis() + CONDITION_DEADLINE_MS;
      while (refused == null && System.currentTimeMillis() < deadline) {
        boolean before = !payA.isDone();
        refused = newRequestRefused(api, "/orders/" + a, buyer.token());
        aInFlightWhenRefused = before && !payA.isDone();
        if (refused == null) Thread.sleep(50);
      }
      ev.note("a new request during the drain: " + refused + (aInFlightWhenRefused ? ", while A's pay was in flight" : ""));
      ev.check(refused != null, "a new request during the drain is refused (503 or connection refused)");
      ev.check(aInFlightWhenRefused, "it was refused while the in-flight pay was still being served");
      // the service ends the stream itself: it ends while the process still runs (B's charge keeps the
      // worker draining for seconds), not when the process finally exits
      boolean streamEnded = events.ended(CONDITION_DEADLINE_MS);
      boolean aliveWhenEnded = first.isAlive();
      ev.note("the event stream ended " + (System.currentTimeMillis() - sigterm) + " ms after SIGTERM");
      ev.check(streamEnded && aliveWhenEnded, "the open event stream ended while the service was still draining,"
          + " instead of holding the drain");
      events.close();

      HttpJson.Reply ra = payA.get(30, TimeUnit.SECONDS);
      ev.note("A's pay answered " + ra.status() + " " + ra.raw() + " " + (System.currentTimeMillis() - sigterm)
          + " ms after SIGTERM");
      ev.equal(200, ra.status(), "the in-flight pay got its answer");
      ev.equal("PAID", ra.text("status"), "the in-flight pay is PAID");

      int exit = first.awaitExit(60_000);
      long exited = System.currentTimeMillis();
      ev.note("exit status " + exit + ", " + (exited - sigterm) + " ms after SIGTERM, " + (exited - bCharged)
          + " ms after B's charge was sent (its reply takes " + B_REPLY_MS + " ms)");
      ev.equal(0, exit, "exit status 0");
      ev.check(exited - sigterm < EXIT_BOUND_MS, "exited within " + EXIT_BOUND_MS + " ms of SIGTERM");
      ev.check(exited - bCharged >= B_REPLY_MS - 1_000,
          "the process did not exit before the worker finished B's charge (its reply came " + B_REPLY_MS + " ms after it was sent)");
      HttpJson.Reply rb = payB.get(30, TimeUnit.SECONDS);
      // on the dev server B's run may sit on the stopped worker's sticky queue until the server moves it
      ev.note("B's pay (through the other API) answered " + rb.status() + " " + rb.raw());
      String record = exitRecord(first.log());
      ev.note("exit record: " + record);
      checkRecord(record, "first stop");
      ev.check(first.log().contains("order " + a + " event stream ended: the service is stopping"),
          "the stream's end is logged");
    }

    try (ChildJvm second = ChildJvm.start("cap10-service-2", FAST_START, props, "server", "embedded.yml")) {
      second.awaitLog("=== flashsale is up ===", 120_000);
      ev.check(!second.logContains("had no running workflow"), "no order needed a new workflow at the restart");
      stack.awaitStatus(b, "PAID", 30_000);
      String tb = stack.sql.timeline(b);
      ev.note("timeline " + b + ": " + tb);
      ev.check(tb.endsWith("[PAYING->PAID v3 charge reply]") && !tb.contains("UNKNOWN"),
          "B is PAID from the charge the old worker finished (no UNKNOWN, no query)");
      ev.note("timeline " + a + ": " + stack.sql.timeline(a));
      ev.equal(1, Buyers.chargeRequests(stack.channel, a), "one charge for A");
      ev.equal(1, Buyers.chargeRequests(stack.channel, b), "one charge for B");

      HttpJson buyer = service.login("t1", "user-cap10-3");
      String c = Buyers.create(buyer, "cap10-c", SKU, 1).text("order_id");
      ev.equal("PAID", Buyers.pay(buyer, c).text("status"), "the restarted service takes and pays orders");
      stack.awaitNothingPending(15_000);
      String report = stack.reconcile();
      ev.check(!report.contains("ORPHAN"), "no order without its workflow (no ORPHAN)");
      stack.checkReconcileClean(ev, "reconcile clean after the stop and the restart");

      long sigterm = System.currentTimeMillis();
      second.sigterm();
      int exit = second.awaitExit(60_000);
      ev.note("second stop, nothing in flight: exit " + exit + " after " + (System.currentTimeMillis() - sigterm) + " ms");
      ev.equal(0, exit, "the second stop exits 0 too");
      checkRecord(exitRecord(second.log()), "second stop");
    }
  }

  /** One request on a new connection: "503", "connection refused", or null when it was served. */
  private static String newRequestRefused(int port, String path, String token) throws InterruptedException {
    HttpClient fresh = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    try {
      HttpResponse<String> r = fresh.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(5)).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 503 ? "503" : null;
    } catch (ConnectException e) {
      return "connection refused";
    } catch (IOException e) {
      return null; // anything else is no clear refusal: ask again
    }
  }

  private static String exitRecord(String log) {
    return log.lines().filter(l -> l.contains("flashsale stopped after SIGTERM")).reduce((x, y) -> y).orElse("");
  }

  private static void checkRecord(String record, String which) {
    for (String fact : new String[] {"requestsInFlight=0", "ordersPoolClosed=true", "workerTerminated=true",
        "temporalConnectionClosed=true", "relayStopped=true"}) {
      ev.check(record.contains(fact), which + ": the exit record says " + fact);
    }
    ev.check(record.endsWith("exit 0"), which + ": the exit record ends with exit 0");
  }
}
