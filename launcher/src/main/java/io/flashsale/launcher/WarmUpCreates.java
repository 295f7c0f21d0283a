package io.flashsale.launcher;

import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.persistence.Skus;
import io.flashsale.workflows.Orders;
import java.util.UUID;

/**
 * Creates of the warm-up tenant's SKU, which has no stock, sent as a buyer's create reaches the
 * engine (docs/DESIGN.md §Warm from the first buyer): each starts an order run on the orders' task
 * queue, whose create handler runs the reserve's local step on PostgreSQL, finds nothing and
 * answers SOLD_OUT; the run ends with no order row. They compile what the echo runs ({@link
 * io.flashsale.workflows.WarmUpRuns}) and the replays do not: a create's own workflow task and its
 * database step. Another instance's worker may take one: it is warmed instead, nothing else. The
 * SKU's stock is set to 0 first, as the sold-out part does; one that keeps units (some are held by
 * orders made on it) ends this part before any create, since its creates could order.
 */
final class WarmUpCreates {
  private final Orders orders;
  private final Skus skus;
  private final String tag = UUID.randomUUID().toString().substring(0, 8);
  private volatile boolean noStock;

  WarmUpCreates(Orders orders, Skus skus) {
    this.orders = orders;
    this.skus = skus;
  }

  /** Create {@code n}: returns once the engine answered SOLD_OUT; throws otherwise. */
  void create(int n) throws Exception {
    if (!noStock) {
      synchronized (this) {
        if (!noStock) {
          String hasStock = WarmUp.withoutStock(skus);
          if (hasStock != null) throw new IllegalStateException(hasStock);
          noStock = true;
        }
      }
    }
    CreateOrder request = new CreateOrder(WarmUp.TENANT, "warm-up-" + (n % WarmUp.BUYERS),
        "warm-up-engine-" + tag + "-" + n, WarmUp.SKU, 1, null);
    // the engine call's own end (the commands' deadline), not the buyers' create deadline: a cold
    // instance's first creates are slow, which is why they are sent here
    CreateResult answer = orders.startCreate(request).answer().get();
    if (answer.outcome() != CreateOutcome.SOLD_OUT) {
      throw new IllegalStateException("warm-up create " + n + " answered " + answer.outcome());
    }
  }
}
