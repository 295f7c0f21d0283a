package io.flashsale.api.tasks;

import io.dropwizard.servlets.tasks.Task;
import io.flashsale.activities.Skus;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/** POST /tasks/sku?tenant=&sku=&total=&unit_price=&per_user_limit= : create or reset a SKU. */
public class SkuTask extends Task {
  private final Skus skus;

  public SkuTask(Skus skus) {
    super("sku");
    this.skus = skus;
  }

  @Override
  public void execute(Map<String, List<String>> params, PrintWriter out) {
    String tenant = one(params, "tenant", null);
    String sku = one(params, "sku", null);
    int total = Integer.parseInt(one(params, "total", null));
    long unitPrice = Long.parseLong(one(params, "unit_price", "1990"));
    int limit = Integer.parseInt(one(params, "per_user_limit", "3"));
    skus.upsert(tenant, sku, total, unitPrice, limit);
    out.println("sku " + tenant + "/" + sku + " total=" + total + " remaining=" + skus.remaining(tenant, sku)
        + " unit_price=" + unitPrice + " per_user_limit=" + limit);
  }

  static String one(Map<String, List<String>> params, String name, String fallback) {
    List<String> v = params.get(name);
    if (v == null || v.isEmpty() || v.get(0).isBlank()) {
      if (fallback == null) throw new IllegalArgumentException("missing parameter " + name);
      return fallback;
    }
    return v.get(0);
  }
}
