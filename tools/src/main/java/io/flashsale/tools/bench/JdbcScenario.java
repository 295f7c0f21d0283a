package io.flashsale.tools.bench;

import io.flashsale.activities.OrderActivitiesImpl;
import io.flashsale.domain.CreateOrder;
import io.flashsale.persistence.Database;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The JDBC ceiling: the same admission (OrderActivitiesImpl.reserve, so the very same SQL) straight
 * over JDBC: no HTTP, no Temporal. C client threads share a pool of {@code poolSize} connections:
 * the hot SKU row serializes them, so a few connections are the fastest.
 */
final class JdbcScenario {
  /** The reservation TTL the ceiling's orders get, as the service's default. */
  static final Duration RESERVATION_TTL = Duration.ofMinutes(1);

  private final LoadContext ctx;

  JdbcScenario(LoadContext ctx) {
    this.ctx = ctx;
  }

  ScenarioResult run(int run, int n, int clients, int poolSize, Duration max) throws Exception {
    String sku = ctx.newSku("jdbc-" + run, 2 * n);
    Load.Endpoints at = ctx.at;
    try (Database db = new Database(at.jdbcUrl(), at.dbUser(), at.dbPassword(), poolSize, Duration.ofSeconds(60))) {
      OrderActivitiesImpl admission = new OrderActivitiesImpl(db, RESERVATION_TTL);
      db.read(c -> c.isValid(1)); // the pool's first connection before the window
      ctx.mark(Load.MARK_START);
      ClosedLoop.Batch b = ClosedLoop.run(clients, n, max, i -> ClosedLoop.timed(() -> admission.reserve(
          new CreateOrder(LoadContext.TENANT, LoadContext.subject(i), sku + "-" + i, sku, 1, null), "bench-jdbc")
          .outcome().name()));
      ctx.mark(Load.MARK_END);
      List<Long> created = Stats.latencies(b.results(), "CREATED");
      List<String> broken = Invariants.ceiling(Invariants.stock(ctx, sku), created.size());
      // these orders have no workflow: they go, so nothing is left non-final without one
      ctx.deleteSku(sku);
      return LoadContext.result("jdbc", run, clients, b, created.size() / b.seconds(), "created/s", created,
          new LinkedHashMap<>(), broken, List.of("pool " + poolSize));
    }
  }
}
