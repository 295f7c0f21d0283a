package io.flashsale.tools.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * B4, the crowd: {@code n} distinct buyers (one login each) arrive within {@code arrivalSeconds}
 * for {@code units} of one SKU (one per buyer). A 503 is retried with the same key after its
 * Retry-After until the buyer has a definite answer. Reports the time until the last buyer had
 * it, latency per outcome (first send to final answer), the 503s and retries, and fairness: of
 * the units sold, how many went to the first tenth of the arrivals by send time.
 */
final class B4Scenario {
  /** The outcomes a buyer may end with: anything else (a 503 never retried to an answer, no answer) is a failure. */
  static final Set<String> DEFINITE = Set.of("CREATED", "REPLAY", "SOLD_OUT", "USER_LIMIT");

  /**
   * A buyer who has a unit: CREATED, or REPLAY (an earlier try answered 503 at the engine's deadline
   * while its order was made, and the retry with the key was answered from the row).
   */
  static boolean bought(String outcome) {
    return outcome.equals("CREATED") || outcome.equals("REPLAY");
  }

  private final LoadContext ctx;

  B4Scenario(LoadContext ctx) {
    this.ctx = ctx;
  }

  ScenarioResult run(int run, int n, int units, double arrivalSeconds, Duration max) throws Exception {
    String[] tokens = Logins.of(ctx.api, LoadContext.TENANT, "b4-" + run + "-" + ctx.tag + "-", n).toArray(String[]::new);
    String sku = ctx.newSku("b4-" + run, units, 1);
    List<Crowd.Ended> ended;
    long unavailable;
    long connectionRetries;
    long t0;
    try (Crowd crowd = new Crowd(n)) {
      ctx.mark(Load.MARK_START);
      t0 = System.nanoTime();
      ended = crowd.run(ctx.at.api() + "/orders", tokens,
          i -> "{\"request_key\":\"" + sku + "-" + i + "\",\"sku\":\"" + sku + "\",\"quantity\":1}",
          n / arrivalSeconds, Load.REQUEST_TIMEOUT, t0 + max.toNanos(), t0);
      unavailable = crowd.unavailable();
      connectionRetries = crowd.connectionRetries();
    }
    List<Timed> results = new ArrayList<>();
    for (Crowd.Ended e : ended) results.add(new Timed(e.outcome(), e.nanos()));
    ClosedLoop.Batch b = new ClosedLoop.Batch(results, (System.nanoTime() - t0) / 1e9);
    ctx.mark(Load.MARK_END);
    List<Crowd.Ended> buyers = new ArrayList<>(ended);
    buyers.sort(Comparator.comparingLong(Crowd.Ended::firstSentNanos));
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
    Invariants.Stock s = Invariants.stock(ctx, sku);
    long undecided = buyers.stream().filter(x -> !DEFINITE.contains(x.outcome())).count();
    List<String> broken = Invariants.crowd(s, n, buyers.size(), undecided, sold, String.valueOf(Stats.outcomes(b.results())));
    m.put("oversell", (double) s.oversell());
    m.put("remaining", (double) s.remaining());
    List<Long> created = Stats.latencies(b.results(), "CREATED");
    return new ScenarioResult("b4", run, n, b.results().size(), (System.nanoTime() - t0) / 1e9, lastAnswer,
        "s until the last buyer's answer", Stats.pct(created, 50), Stats.pct(created, 99), Stats.outcomes(b.results()), m,
        broken, "", List.of(units + " units, " + n + " buyers arriving within " + arrivalSeconds + " s, 503s retried"
            + " after Retry-After and failed connections after 1 s, same key; latency = first send to final answer"));
  }
}
