package io.flashsale.tools.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** pgbench on the admission's statements (see {@link Pgbench}), at the same client count. */
final class PgbenchScenario {
  private final LoadContext ctx;

  PgbenchScenario(LoadContext ctx) {
    this.ctx = ctx;
  }

  ScenarioResult run(int run, int clients, int seconds) throws Exception {
    String sku = ctx.newSku("pgb-" + run, 1_000_000_000);
    Path script = Files.createTempFile("flashsale-admission-", ".sql");
    Pgbench.Target target = Pgbench.Target.of(ctx.at.jdbcUrl(), ctx.at.dbUser(), ctx.at.dbPassword());
    try {
      Files.writeString(script, Pgbench.script(LoadContext.TENANT, sku, "pgb-u", LoadContext.SUBJECTS,
          LoadContext.UNIT_PRICE, JdbcScenario.RESERVATION_TTL.toMillis()));
      ProcessBuilder pb = new ProcessBuilder(Pgbench.command(target, script.toString(), clients, seconds))
          .redirectErrorStream(true);
      if (target.password() != null && !target.password().isEmpty()) pb.environment().put("PGPASSWORD", target.password());
      ctx.mark(Load.MARK_START);
      long t0 = System.nanoTime();
      Process p = pb.start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int code = p.waitFor();
      double wall = (System.nanoTime() - t0) / 1e9;
      ctx.mark(Load.MARK_END);
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
      broken.addAll(Invariants.stock(ctx, sku).broken());
      Map<String, Double> m = new LinkedHashMap<>();
      m.put("latency avg ms", sum.latencyAverageMs());
      ctx.deleteSku(sku);
      // pgbench gives an average latency, not percentiles: p50/p99 stay NaN rather than pass the mean off as a median
      return new ScenarioResult("pgbench", run, clients, sum.processed(), wall, sum.tps(), "tx/s", Double.NaN,
          Double.NaN, Map.of("COMMITTED", sum.processed()), m, broken, "", List.of("pgbench reports the mean latency only"));
    } finally {
      Files.deleteIfExists(script);
    }
  }
}
