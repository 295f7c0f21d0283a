package io.flashsale.api.resources;

import io.flashsale.api.auth.Caller;
import io.flashsale.api.core.ApiError;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import java.util.regex.Pattern;

/** Who may see an order: its own subject in its own tenant. One rule for every resource that names an order. */
final class OwnOrders {
  /** "ord-" and at least four digits (docs/DESIGN.md §Data model). */
  static final Pattern ORDER_ID = Pattern.compile("ord-[0-9]{4,12}");

  private OwnOrders() {}

  static boolean owns(Caller caller, OrderDetails o) {
    return o.tenant().equals(caller.tenant()) && o.subject().equals(caller.subject());
  }

  /** The caller's order: 404 ORDER_NOT_FOUND for an unknown or malformed id, 403 FORBIDDEN for another's. */
  static OrderDetails require(OrderQueries queries, Caller caller, String id) {
    if (!ORDER_ID.matcher(id).matches()) throw ApiError.exception(404, "ORDER_NOT_FOUND", "no such order");
    OrderDetails o = queries.get(id);
    if (o == null) throw ApiError.exception(404, "ORDER_NOT_FOUND", "no such order");
    if (!owns(caller, o)) throw ApiError.exception(403, "FORBIDDEN", "not your order");
    return o;
  }
}
