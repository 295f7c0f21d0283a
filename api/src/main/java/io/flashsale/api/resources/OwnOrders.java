package io.flashsale.api.resources;

import io.flashsale.api.auth.Caller;
import io.flashsale.api.core.ApiError;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries;
import java.util.regex.Pattern;

/** Who may see an order: its own subject in its own tenant. One rule for every resource that names an order. */
final class OwnOrders {
  /**
   * "ord-" and four to twelve digits: twelve for every id issued now (a keyed permutation of the
   * order's number, OrderIds), four or more for orders made before (docs/DESIGN.md §Data model).
   */
  static final Pattern ORDER_ID = Pattern.compile("ord-[0-9]{4,12}");

  private OwnOrders() {}

  static boolean owns(Caller caller, OrderDetails o) {
    return o.tenant().equals(caller.tenant()) && o.subject().equals(caller.subject());
  }

  /**
   * The caller's order. An unknown or malformed id and another principal's order answer the same
   * 404 ORDER_NOT_FOUND, body for body: whether someone else has an order of that id is not the
   * caller's to learn (docs/DESIGN.md §REST API; the source chapter's 403 was such an oracle).
   */
  static OrderDetails require(OrderQueries queries, Caller caller, String id) {
    if (!ORDER_ID.matcher(id).matches()) throw notFound();
    OrderDetails o = queries.get(id);
    if (o == null || !owns(caller, o)) throw notFound();
    return o;
  }

  /**
   * Whether the request on the wire is a HEAD. Jersey answers a HEAD with the GET method and reports
   * GET as its method, then discards the body: a streamed body (an event stream, an export) would
   * still run and hold its slot, so those resources ask the servlet request. None (an in-memory
   * test container): not a HEAD.
   */
  static boolean isHead(jakarta.servlet.http.HttpServletRequest request) {
    return request != null && "HEAD".equals(request.getMethod());
  }

  private static jakarta.ws.rs.WebApplicationException notFound() {
    return ApiError.exception(404, "ORDER_NOT_FOUND", "no such order");
  }
}
