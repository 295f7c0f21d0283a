package io.flashsale.tools.bench;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * B1, admission: N creates, distinct keys, the storm's distinct buyers in turn, one SKU of
 * {@code stock} units, C clients or an open loop. A 503 is sent again with its key, as a buyer
 * does ({@link Answers}): an order its first attempt made counts as created (REPLAY).
 */
final class B1Scenario {
  private final LoadContext ctx;
  /** Arrivals per second; 0: a closed loop of the scenario's clients. */
  private final double openRate;

  B1Scenario(LoadContext ctx, double openRate) {
    this.ctx = ctx;
    this.openRate = openRate;
  }

  ScenarioResult run(int run, int n, int stock, int clients, Duration max) throws Exception {
    ctx.login();
    String sku = ctx.newSku("b1-" + run, stock);
    ctx.mark(Load.MARK_START);
    Answers answers = new Answers();
    ClosedLoop.Batch b = drive(openRate, clients, n, max, i -> answers.create(ctx.buyer(i), sku, sku + "-" + i));
    ctx.mark(Load.MARK_END);
    List<Long> created = new java.util.ArrayList<>(Stats.latencies(b.results(), "CREATED"));
    created.addAll(Stats.latencies(b.results(), "REPLAY")); // made by an attempt answered 503, read by its retry
    List<Long> soldOut = Stats.latencies(b.results(), "SOLD_OUT");
    Invariants.Stock s = Invariants.stock(ctx, sku);
    List<String> broken = Invariants.admission(s, created.size());
    Map<String, Double> m = new LinkedHashMap<>();
    m.put("sold_out/s", soldOut.size() / b.seconds());
    if (!soldOut.isEmpty()) { // no sold-out answer, no sold-out latency
      m.put("sold_out p50 ms", Stats.pct(soldOut, 50));
      m.put("sold_out p99 ms", Stats.pct(soldOut, 99));
    }
    answers.into(m);
    m.put("oversell", (double) s.oversell());
    m.put("remaining", (double) s.remaining());
    m.put("order rows", (double) s.orderRows());
    return LoadContext.result("b1", run, clients, b, created.size() / b.seconds(), "created/s", created, m, broken,
        openRate > 0 ? List.of("stock " + stock, String.format("open loop at %.1f arrivals/s", openRate))
            : List.of("stock " + stock));
  }

  /** An open loop at {@code openRate} arrivals per second, or (0) a closed loop of {@code clients}. */
  static ClosedLoop.Batch drive(double openRate, int clients, int n, Duration max, IntFunction<Timed> request)
      throws Exception {
    return openRate > 0 ? OpenLoop.run(openRate, n, max, request) : ClosedLoop.run(clients, n, max, request);
  }

}
