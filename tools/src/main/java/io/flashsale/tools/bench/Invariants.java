package io.flashsale.tools.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The invariants the load checks after every scenario, each a plain function of counts that says
 * what is broken (an empty list: nothing). The scenarios read the counts from the database
 * ({@link #stock}, {@link #paidOrders}) and add what these functions return to their result.
 *
 * <ul>
 *   <li>stock: no oversell (live orders at most the units), {@code remaining >= 0}, conservation
 *       {@code remaining + held + confirmed = total};
 *   <li>answers: every CREATED (or REPLAY) answer has its order row; a SKU with no stock has no order;
 *   <li>payment: every order whose pay call answered ends, PAID when it answered PAID (or FAILED
 *       when its charge call timed out and the channel never took it), each PAID one with exactly one transition to PAID,
 *       one ORDER_PAID event and at most one PAID notice effect (exactly one when only notices could
 *       pay it); every accepted or arrived notice got its effect.
 * </ul>
 */
public final class Invariants {

  /**
   * A SKU's stock: conservation (remaining + held + confirmed = total) and oversell (more live
   * orders than units).
   *
   * @param orderRows every order of the SKU, cancelled ones too
   * @param liveOrders the units of its orders that are not CANCELLED, FAILED or REFUNDED
   */
  record Stock(long total, long remaining, long heldOrConfirmed, long orderRows, long liveOrders) {
    long oversell() {
      return Math.max(0, liveOrders - total);
    }

    List<String> broken() {
      List<String> b = new ArrayList<>();
      if (remaining < 0) b.add("remaining " + remaining + " < 0");
      if (remaining + heldOrConfirmed != total) {
        b.add("conservation: remaining " + remaining + " + held/confirmed " + heldOrConfirmed + " != total " + total);
      }
      if (oversell() > 0) b.add("oversell " + oversell() + ": " + liveOrders + " live orders for " + total + " units");
      return b;
    }
  }

  /**
   * The PAID orders of a SKU, and how many of them break exactly-once: not exactly one transition
   * to PAID, not exactly one ORDER_PAID event, more than one notice with the effect PAID, none.
   */
  record PaidOrders(long paid, long notOneTransition, long notOneEvent, long moreThanOneEffect, long noEffect) {
    /**
     * @param paidByNotice only notices could pay these orders (b3): each needs exactly one PAID
     *     effect; otherwise (b2) the pay call's answer did it first and the callback came as a duplicate
     */
    List<String> broken(boolean paidByNotice) {
      List<String> b = new ArrayList<>();
      if (notOneTransition > 0) b.add(notOneTransition + " of " + paid + " PAID orders without exactly one transition to PAID");
      if (notOneEvent > 0) b.add(notOneEvent + " of " + paid + " PAID orders without exactly one ORDER_PAID event");
      if (moreThanOneEffect > 0) b.add(moreThanOneEffect + " of " + paid + " PAID orders with more than one PAID effect");
      if (paidByNotice && noEffect > 0) b.add(noEffect + " of " + paid + " PAID orders without a PAID effect");
      return b;
    }
  }

  /** B1: the stock holds and every CREATED answer has its order row. */
  static List<String> admission(Stock s, long createdAnswers) {
    List<String> b = new ArrayList<>(s.broken());
    if (s.orderRows() < createdAnswers) b.add(createdAnswers + " CREATED answers but " + s.orderRows() + " order rows");
    return b;
  }

  /** B1 sold out: the stock holds and a SKU with no stock has no order. */
  static List<String> soldOut(Stock s) {
    List<String> b = new ArrayList<>(s.broken());
    if (s.orderRows() != 0) b.add(s.orderRows() + " orders on a SKU with no stock");
    return b;
  }

  /** The JDBC ceiling: the stock holds and there is exactly one order row per CREATED (no workflow may add or end one). */
  static List<String> ceiling(Stock s, long created) {
    List<String> b = new ArrayList<>(s.broken());
    if (s.orderRows() != created) b.add(created + " CREATED but " + s.orderRows() + " order rows");
    return b;
  }

  /**
   * B4, the crowd: the stock holds, every buyer was sent and got a definite answer, and every buyer
   * who has a unit (CREATED or REPLAY) has an order row.
   *
   * @param undecided buyers whose last answer was not definite (a 503 never retried to an answer, none)
   * @param outcomes every outcome counted, for the message
   */
  static List<String> crowd(Stock s, int buyers, int sent, long undecided, long bought, String outcomes) {
    List<String> b = new ArrayList<>(s.broken());
    if (undecided > 0) b.add(undecided + " buyers without a definite answer: " + outcomes);
    if (sent != buyers) b.add((buyers - sent) + " buyers never sent");
    if (s.orderRows() < bought) b.add(bought + " CREATED or REPLAY answers but " + s.orderRows() + " order rows");
    return b;
  }

  /**
   * B2: every order whose pay call answered has ended by the end of the wait: one answered PAID is
   * PAID; any other (UNKNOWN: its charge call timed out) is PAID, or FAILED when the channel never
   * took its charge; none is left PAYING or UNKNOWN.
   *
   * @param payAnswers order id to its pay call's answer (PAID, UNKNOWN, ...)
   * @param statuses order id to its status at the end of the wait
   */
  static List<String> everyPaidCallEnded(Map<String, String> payAnswers, Map<String, String> statuses, Duration waited) {
    long unended = unended(payAnswers, statuses);
    Map<String, Long> paidNotPaid = new java.util.TreeMap<>();
    payAnswers.forEach((id, answer) -> {
      String now = statuses.get(id);
      if ("PAID".equals(answer) && !"PAID".equals(now)) paidNotPaid.merge(String.valueOf(now), 1L, Long::sum);
    });
    List<String> b = new ArrayList<>();
    if (unended > 0) b.add(unended + " paid orders neither PAID nor FAILED after " + waited.toSeconds() + " s");
    if (!paidNotPaid.isEmpty()) b.add("orders whose pay answered PAID are not PAID: " + paidNotPaid);
    return b;
  }

  /** How many of the answered pays' orders are neither PAID nor FAILED (or have no row). */
  static long unended(Map<String, String> payAnswers, Map<String, String> statuses) {
    return payAnswers.size() - endedAs("PAID", payAnswers, statuses) - endedAs("FAILED", payAnswers, statuses);
  }

  /** How many of the answered pays' orders have {@code status}. */
  static long endedAs(String status, Map<String, String> payAnswers, Map<String, String> statuses) {
    return payAnswers.keySet().stream().filter(id -> status.equals(statuses.get(id))).count();
  }

  /**
   * B3: every accepted notice and every arrival got its effect by the end of the wait, and every
   * order of the storm ({@code settled}, those whose notices were sent) is PAID.
   */
  static List<String> stormApplied(long accepted, long arrivals, long applied, long settled, long paidOrders,
      Duration waited) {
    List<String> b = new ArrayList<>();
    if (applied < accepted) b.add((accepted - applied) + " accepted notices without an effect after " + waited.toSeconds() + " s");
    if (applied < arrivals) b.add((arrivals - applied) + " of " + arrivals + " arrivals without an effect");
    if (paidOrders < settled) b.add((settled - paidOrders) + " of " + settled + " storm orders not PAID");
    return b;
  }

  // ---------------------------------------------------------------- the counts, from the database

  /** The SKU's stock and orders as the database has them. */
  static Stock stock(LoadContext ctx, String sku) {
    return ctx.firstRow("SELECT s.total, s.remaining,"
        + " (SELECT coalesce(sum(quantity), 0) FROM reservation r WHERE r.tenant = s.tenant AND r.sku = s.sku"
        + "   AND r.status IN ('HELD', 'CONFIRMED')),"
        + " (SELECT count(*) FROM orders o WHERE o.tenant = s.tenant AND o.sku = s.sku),"
        + " (SELECT coalesce(sum(quantity), 0) FROM orders o WHERE o.tenant = s.tenant AND o.sku = s.sku"
        + "   AND o.status NOT IN ('CANCELLED', 'FAILED', 'REFUNDED'))"
        + " FROM sku s WHERE s.tenant = ? AND s.sku = ?",
        rs -> new Stock(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)), LoadContext.TENANT, sku);
  }

  /** The SKU's PAID orders and their transitions to PAID, ORDER_PAID events and PAID notice effects. */
  static PaidOrders paidOrders(LoadContext ctx, String sku) {
    return ctx.firstRow("SELECT count(*), count(*) FILTER (WHERE transitions <> 1), count(*) FILTER (WHERE events <> 1),"
        + " count(*) FILTER (WHERE effects > 1), count(*) FILTER (WHERE effects = 0) FROM ("
        + " SELECT (SELECT count(*) FROM order_transition t WHERE t.order_id = o.order_id AND t.to_status = 'PAID') transitions,"
        + "  (SELECT count(*) FROM outbox e WHERE e.order_id = o.order_id AND e.event_type = 'ORDER_PAID') events,"
        + "  (SELECT count(*) FROM payment_notification n WHERE n.merchant_order = o.order_id AND n.effect = 'PAID') effects"
        + " FROM orders o WHERE o.tenant = ? AND o.sku = ? AND o.status = 'PAID') per_order",
        rs -> new PaidOrders(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)),
        LoadContext.TENANT, sku);
  }

  private Invariants() {}
}
