package io.flashsale.api.tasks;

import io.flashsale.api.auth.TokenService;
import io.flashsale.api.resources.OrderResource;
import io.flashsale.persistence.Skus;
import java.io.PrintWriter;
import java.util.Set;

/**
 * POST /tasks/sku?tenant=&sku=&total=[&unit_price=][&per_user_limit=] : create a SKU or reset its
 * total. An omitted unit_price or per_user_limit keeps the current value (a new SKU needs both).
 * A total below the units already held or confirmed is refused (409 TOTAL_BELOW_HELD).
 */
public class SkuTask extends AdminTask {
  static final long MAX_TOTAL = 1_000_000_000L;
  static final long MAX_UNIT_PRICE = 1_000_000_000_000L;
  static final long MAX_PER_USER_LIMIT = 1_000_000L;

  private final Skus skus;

  public SkuTask(Skus skus) {
    super("sku", Set.of("tenant", "sku", "total", "unit_price", "per_user_limit"));
    this.skus = skus;
  }

  @Override
  protected void run(TaskParams params, PrintWriter out) {
    String tenant = params.name("tenant", TokenService.NAME);
    String sku = params.name("sku", OrderResource.SKU);
    int total = (int) params.number("total", 0, MAX_TOTAL);
    Long unitPrice = params.optionalNumber("unit_price", 1, MAX_UNIT_PRICE);
    Long limit = params.optionalNumber("per_user_limit", 1, MAX_PER_USER_LIMIT);
    Skus.Upsert r = skus.upsert(tenant, sku, total, unitPrice, limit == null ? null : limit.intValue());
    switch (r.outcome()) {
      case Skus.Upsert.NEEDS_PRICE_AND_LIMIT -> throw TaskError.missing(unitPrice == null ? "unit_price" : "per_user_limit");
      case Skus.Upsert.BELOW_HELD -> throw new TaskError(409, "TOTAL_BELOW_HELD", "total", "total " + total
          + " is below the " + r.held() + " units already held or confirmed for " + tenant + "/" + sku);
      default -> out.println("sku " + tenant + "/" + sku + " total=" + r.total() + " remaining=" + r.remaining()
          + " unit_price=" + r.unitPrice() + " per_user_limit=" + r.perUserLimit());
    }
  }
}
