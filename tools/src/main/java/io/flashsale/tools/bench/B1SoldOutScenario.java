package io.flashsale.tools.bench;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;

/** B1 sold out: requests against a SKU with nothing left (total 0), the cheap gate's answer. */
final class B1SoldOutScenario {
  private final LoadContext ctx;
  private final double openRate;

  B1SoldOutScenario(LoadContext ctx, double openRate) {
    this.ctx = ctx;
    this.openRate = openRate;
  }

  ScenarioResult run(int run, int n, int clients, Duration max) throws Exception {
    ctx.login();
    String sku = ctx.newSku("b1s-" + run, 0);
    ctx.mark(Load.MARK_START);
    Answers answers = new Answers();
    ClosedLoop.Batch b = B1Scenario.drive(openRate, clients, n, max, i -> answers.create(ctx.buyer(i), sku, sku + "-" + i));
    ctx.mark(Load.MARK_END);
    List<Long> soldOut = Stats.latencies(b.results(), "SOLD_OUT");
    List<String> broken = Invariants.soldOut(Invariants.stock(ctx, sku));
    java.util.Map<String, Double> m = new LinkedHashMap<>();
    answers.into(m);
    return LoadContext.result("b1-sold-out", run, clients, b, soldOut.size() / b.seconds(), "sold_out/s", soldOut,
        m, broken, List.of());
  }
}
