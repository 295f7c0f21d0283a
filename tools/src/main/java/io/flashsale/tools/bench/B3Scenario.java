package io.flashsale.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.paymentchannel.CallbackSignatures;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.BooleanSupplier;

/**
 * B3, the callback storm: orders whose channel callbacks are held, then {@code copies} duplicates
 * of each one's CHARGED notice, shuffled, over C connections from wrk (each once; from this JVM's
 * clients when wrk is not on the PATH): accepted/s, applied notices/s, and exactly one PAID effect,
 * transition and ORDER_PAID event per order.
 */
final class B3Scenario {
  private static final String WRK = "wrk";
  /**
   * The longest wrk may run: its threads stop sending once the list is sent, and wrk is
   * interrupted once every notice has its row (wrk itself would run to its duration); the storm's
   * time is taken from the arrivals' rows. A storm slower than notices / bound per second is cut,
   * and the scenario says so.
   */
  private static final Duration WRK_STORM_BOUND = Duration.ofSeconds(20);
  private static final String STORM_NOTICE = "ntf-";
  private static final String NOT_CREATED = "NOT_CREATED";
  private static final String NO_ORDER = "NO_ORDER";

  private final LoadContext ctx;

  B3Scenario(LoadContext ctx) {
    this.ctx = ctx;
  }

  private static String stormName(int run) {
    return "b3-" + run;
  }

  /** What the notify ids of run {@code run}'s storm begin with (its SKU's name is in them). */
  static String stormNotifyIdPrefix(int run) {
    return STORM_NOTICE + LoadContext.SKU_PREFIX + stormName(run) + "-";
  }

  ScenarioResult run(int run, int orders, int copies, int clients) throws Exception {
    ctx.login();
    String sku = ctx.newSku(stormName(run), orders);
    List<String> setupFailures = Collections.synchronizedList(new ArrayList<>());
    ClosedLoop.Batch setup = ClosedLoop.run(Math.min(clients, orders), orders, Duration.ofMinutes(5), i -> {
      HttpJson buyer = ctx.buyer(i);
      String id;
      try {
        id = buyer.postUntilAnswered("/orders", Map.of("request_key", sku + "-" + i, "sku", sku, "quantity", 1),
            Answers.RETRY_FOR).text("order_id");
      } catch (RuntimeException e) {
        setupFailures.add("CREATE_" + ClosedLoop.failure(e));
        return new Timed(NO_ORDER, 0);
      }
      if (id == null) return new Timed(NOT_CREATED, 0);
      try {
        // the channel answers late, keeps its own callback and answers no query: the order stays
        // UNKNOWN (queried with production's timing) until the storm's notices settle it
        ctx.channel.post("/_faults", Map.of("merchant_order", id, "reply_delay_ms", 1200, "hold_callbacks", true,
            "query_unavailable", true));
        buyer.post("/orders/" + id + "/pay", null);
      } catch (RuntimeException e) { // the order joins the storm if the channel has its charge (below)
        setupFailures.add("PAY_" + ClosedLoop.failure(e));
      }
      return new Timed(id, 0);
    });
    List<String> notices = new ArrayList<>();
    long notCreated = 0;
    Map<String, String> charged = chargesInTheStatement(); // the orders' own queries get no answer
    List<String> stormOrders = new ArrayList<>();
    for (Timed t : setup.results()) {
      String id = t.outcome();
      if (id.equals(NOT_CREATED)) notCreated++;
      if (id.equals(NOT_CREATED) || id.equals(NO_ORDER) || id.startsWith("ERROR_") || ClosedLoop.noAnswer(id)) continue;
      String txn = charged.get(id);
      if (txn == null) { // no charge in the statement yet: no notice for the storm, so its queries settle it
        setupFailures.add("NO_CHARGE");
        HttpJson.Reply lifted = ctx.channel.post("/_faults", Map.of("merchant_order", id, "query_unavailable", false));
        if (lifted.status() != 200) throw new IllegalStateException("the channel kept its fault on " + id + ": " + lifted.raw());
        continue;
      }
      stormOrders.add(id);
      String body = HttpJson.JSON.writeValueAsString(Map.of("notify_id", STORM_NOTICE + sku + "-" + id, "merchant_order", id,
          "kind", "CHARGED", "amount", LoadContext.UNIT_PRICE, "txn", txn));
      for (int k = 0; k < copies; k++) notices.add(body);
    }
    Collections.shuffle(notices, new Random(run));
    int total = notices.size();
    int settled = total / Math.max(1, copies);
    // the storm is what settles its orders: each must still be UNKNOWN (a channel without the
    // fault would have answered their queries, and the storm would only send copies)
    long unknownBeforeTheStorm = ctx.count("SELECT count(*) FROM orders WHERE status = 'UNKNOWN' AND order_id = ANY(?)",
        (Object) stormOrders.toArray(new String[0]));
    ctx.mark(Load.MARK_START);
    String arrivalsOfTheStorm = "SELECT count(*) FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
        + " WHERE o.sku = ?";
    boolean fromWrk = Wrk.onPath() && !notices.isEmpty();
    Storm storm = fromWrk
        ? wrkStorm(notices, clients, () -> ctx.count(arrivalsOfTheStorm, sku) >= total) : javaStorm(notices, clients);
    // wrk is interrupted once every notice has its row, with requests still in flight: the service
    // records those after it, so the arrivals are counted once they stopped growing, and every one
    // of them must get its effect (counting them earlier left the late ones out of the wait)
    long applied = ctx.awaitCount(arrivalsOfTheStorm + " AND n.effect IS NOT NULL",
        Math.max(storm.answered(), ctx.settledCount(arrivalsOfTheStorm, sku)), sku);
    ctx.mark(Load.MARK_END);
    // the arrivals, those answered at arrival (their effect came with the INSERT: applied_at =
    // received_at), and the service's own clock: first to last arrival, and to the last effect
    double[] seen = ctx.firstRow("SELECT count(*), count(*) FILTER (WHERE n.applied_at = n.received_at),"
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
    if (unknownBeforeTheStorm < settled) {
      broken.add("only " + unknownBeforeTheStorm + " of the storm's " + settled + " orders were UNKNOWN before it: settled otherwise");
    }
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
    long paidOrders = ctx.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAID'", sku);
    broken.addAll(Invariants.stormApplied(accepted, arrivals, applied, settled, paidOrders, LoadContext.CONVERGE));
    broken.addAll(Invariants.paidOrders(ctx, sku).broken(true));
    Map<String, Double> m = new LinkedHashMap<>();
    m.put("applied notices/s", applied / applySeconds);
    m.put("apply seconds", applySeconds);
    return new ScenarioResult("b3", run, clients, storm.requests(), stormSeconds, accepted / stormSeconds, "accepted/s",
        storm.p50Ms(), storm.p99Ms(), storm.outcomes(), m, broken, "", notes);
  }

  /** The channel's statement: each charged merchant order's txn. */
  private Map<String, String> chargesInTheStatement() {
    Map<String, String> txns = new HashMap<>();
    HttpJson.Reply statement = ctx.channel.get("/statement");
    if (statement.status() != 200 || statement.body() == null) {
      throw new IllegalStateException("the channel's statement answered " + statement.status() + ": " + statement.raw());
    }
    for (JsonNode row : statement.body().path("rows")) {
      if (row.path("type").asText().equals("CHARGE")) txns.put(row.path("merchant_order").asText(), row.path("txn").asText());
    }
    return txns;
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
  private Storm wrkStorm(List<String> notices, int clients, BooleanSupplier allArrived) throws Exception {
    String secret = ctx.at.callbackSecret();
    long now = System.currentTimeMillis() / 1000; // valid for 300 s; the storm takes seconds
    List<Wrk.SignedCallback> signed = notices.stream().map(body -> Wrk.SignedCallback.of(body, secret, now)).toList();
    Process p = Wrk.callbacksOnce(ctx.at.api(), signed, 200, clients, (int) WRK_STORM_BOUND.toSeconds());
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

  /** A callback as the channel sends it: signed when the service has a callback secret. */
  private Timed callback(String body) {
    return ClosedLoop.timed(() -> {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(ctx.at.api() + "/callbacks/payment"))
          .timeout(Load.REQUEST_TIMEOUT).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofByteArray(bytes));
      String secret = ctx.at.callbackSecret();
      if (secret != null && !secret.isBlank()) {
        req.header(CallbackSignatures.HEADER, CallbackSignatures.header(secret, System.currentTimeMillis() / 1000, bytes));
      }
      try {
        return "HTTP_" + ctx.raw.send(req.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
      } catch (IOException e) {
        return ClosedLoop.failure(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "ERROR_INTERRUPTED";
      }
    });
  }
}
