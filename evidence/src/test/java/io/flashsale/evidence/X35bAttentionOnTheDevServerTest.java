package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * X-35b: an UNKNOWN order raises its hand on a real server, seen as an operator sees it. The
 * channel goes away ({@link ChannelOutage}) while one order's charge request is held at the
 * channel, before it takes effect: the pay answers UNKNOWN after the channel timeout and the
 * charge never lands (the held request dies with the stub). With {@code orders.attentionAfter}
 * 5 s the first round at the channel runs out within seconds: {@code orders.attention} and the
 * search attribute {@code OrderAttention} say UNKNOWN_AGED; the real temporal CLI lists the run
 * with {@code OrderAttention IS NOT NULL} and with {@code OrderAttention="UNKNOWN_AGED"}; the
 * admin port's metric {@code flashsale_orders_needing_attention{reason="UNKNOWN_AGED"}} is 1. The
 * health check never reads attention: during the outage only its channel check is unhealthy.
 * The channel comes back right after a failed attempt of the longer round (the server's pending
 * activity says when the next one is due, at least 8 s later): with the hand still raised the
 * health check is healthy and a reconcile run (which needs the channel's statement, so not during
 * the outage) reports the order as a NEEDS_ATTENTION finding. Then the round's next attempt finds
 * no charge (NOT_FOUND), closes it, the order is FAILED and its unit released; the hand is lowered
 * everywhere (row, search attribute, the CLI's lists, the metric) and reconcile is clean.
 */
@Tag("dev-server-only") // the real CLI over visibility; the in-memory engine has neither
class X35bAttentionOnTheDevServerTest {
  // later rounds last 8 × 5 s = 40 s, attempts 2, 4, 8, then 15 s apart: a window to bring the channel back in
  // the charge must time out (a request held at the channel): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.attentionAfter", "5s")
      .with("orders.unknownQueryCap", "15s")
      // the reservation outlives the experiment: no expiry in between, the close alone releases the unit
      .with("orders.reservationTtl", "5m");
  @RegisterExtension static final Evidence ev = new Evidence("X-35b",
      "an UNKNOWN order with the channel down raises UNKNOWN_AGED: row, search attribute, CLI, reconcile, metric; healthy; lowered when it converges");

  private static final String SKU = "sku-x35b";
  private static final String METRIC = "flashsale_orders_needing_attention";

  @Test
  void anUnknownOrderRaisesItsHandAndLowersItWhenItConverges() throws Exception {
    ev.check(stack.devServer(), "runs on the dev server");
    ChannelOutage outage = new ChannelOutage(stack);
    stack.sku(SKU, 1, 1);
    HttpJson buyer = stack.api.login("t1", "user-3502");
    String orderId = Buyers.create(buyer, "x35b", SKU, 1).text("order_id");
    String workflowId = Attentions.workflowId(stack, orderId);
    ev.equal(0.0, metric("UNKNOWN_AGED"), "the metric starts at 0 for UNKNOWN_AGED");
    // the charge request is held at the channel before it takes effect; the stub's stop ends it there
    Buyers.fault(stack.channel, orderId, Map.of("hold_request_ms", 10_000, "hold_callbacks", true));

    CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, orderId));
    stack.awaitTrue(() -> "UNKNOWN".equals(status(orderId)), 15_000, orderId + " did not become UNKNOWN");
    outage.begin();
    long downAt = System.currentTimeMillis();
    ev.note("pay answered " + pay.get().status() + " " + pay.get().raw() + "; the channel is down");
    ev.check(stack.sql.timeline(orderId).endsWith("[PAYING->UNKNOWN v3 charge timeout]"),
        "PAYING->UNKNOWN v3 charge timeout (" + stack.sql.timeline(orderId) + ")");

    // the hand goes up
    ev.check(stack.within(() -> "UNKNOWN_AGED".equals(Attentions.row(stack, orderId)), 20_000),
        "orders.attention = 'UNKNOWN_AGED' within 20 s of the outage");
    long raisedMs = System.currentTimeMillis() - downAt;
    ev.check(stack.within(() -> "UNKNOWN_AGED".equals(Attentions.searchAttribute(stack, workflowId)), 5_000),
        "the run's OrderAttention = UNKNOWN_AGED");
    ev.note("raised " + raisedMs + " ms after the channel went down; row: "
        + stack.sql.text("SELECT attention || ' since ' || attention_since || ': ' || attention_detail FROM orders"
        + " WHERE order_id = ?", orderId));
    String[] listed = new String[2];
    ev.check(stack.within(() -> {
      listed[0] = cli("OrderAttention IS NOT NULL");
      listed[1] = cli("OrderAttention=\"UNKNOWN_AGED\"");
      return listed[0].contains(workflowId) && listed[1].contains(workflowId);
    }, 15_000), "temporal workflow list --query 'OrderAttention IS NOT NULL' and 'OrderAttention=\"UNKNOWN_AGED\"' list "
        + workflowId);
    ev.note("temporal workflow list --query 'OrderAttention IS NOT NULL':\n" + listed[0]);
    ev.equal("UNKNOWN", status(orderId), "still UNKNOWN: no answer, no guess");
    ev.equal("HELD", reservation(orderId), "its unit stays HELD");

    ev.check(stack.within(() -> metric("UNKNOWN_AGED") == 1.0, 10_000),
        METRIC + "{reason=\"UNKNOWN_AGED\"} = 1 on the admin port (" + metric("UNKNOWN_AGED") + ")");
    // reconciliation reads the channel's statement: with the channel down it cannot run (printed)
    HttpJson.Reply down = stack.admin.post("/tasks/reconcile", null);
    ev.note("reconcile with the channel down answered " + down.status() + " " + down.raw().trim());
    ev.check(down.status() == 503 && down.raw().contains("CHANNEL_UNAVAILABLE"),
        "reconcile with the channel down is a clear 503 CHANNEL_UNAVAILABLE, not a 500");

    HttpJson.Reply health = stack.admin.get("/healthcheck");
    ev.note("/healthcheck during the outage: " + health.status() + " " + health.raw());
    ev.check(!health.body().path("channel").path("healthy").asBoolean(true), "its channel check is unhealthy: the channel is down");
    java.util.List<String> othersUnhealthy = new java.util.ArrayList<>();
    health.body().fields().forEachRemaining(f -> {
      if (!f.getKey().equals("channel") && !f.getValue().path("healthy").asBoolean()) othersUnhealthy.add(f.getKey());
    });
    ev.equal(java.util.List.of(), othersUnhealthy, "every other check healthy: attention is no health check's business");
    ev.check(!health.raw().contains("ATTENTION") && !health.raw().contains("UNKNOWN_AGED"), "no check mentions attention");

    // the channel back right after an attempt failed: the next is at least 8 s away, the hand still up until then
    PendingActivityInfo[] round = new PendingActivityInfo[1];
    boolean window = stack.within(() -> {
      round[0] = Attentions.pendingRound(stack, workflowId);
      return round[0] != null && round[0].hasNextAttemptScheduleTime()
          && round[0].getNextAttemptScheduleTime().getSeconds() * 1_000 - System.currentTimeMillis() >= 8_000;
    }, 30_000);
    ev.note((window ? "" : "NO WINDOW: ") + Attentions.describeRound(round[0]) + "; now "
        + System.currentTimeMillis() / 1000 + " s");
    outage.end();
    long upAt = System.currentTimeMillis();
    HttpJson.Reply healthUp = stack.admin.get("/healthcheck");
    String stillRaised = Attentions.row(stack, orderId);
    String statusThen = status(orderId);
    ev.note("channel back after " + (upAt - downAt) + " ms down; /healthcheck " + healthUp.status() + " with orders.attention "
        + stillRaised + " and status " + statusThen);
    ev.equal(200, healthUp.status(), "/healthcheck healthy with the channel back (" + healthUp.raw() + ")");
    ev.check(window && "UNKNOWN_AGED".equals(stillRaised) && "UNKNOWN".equals(statusThen),
        "... while the order still had its hand raised (UNKNOWN, UNKNOWN_AGED): one stuck order does not make the service unhealthy");
    String report = stack.reconcile();
    ev.note("reconcile with the channel back, the hand still raised:\n" + report.trim());
    ev.check(report.lines().anyMatch(l -> l.startsWith("mismatch " + orderId + " UNKNOWN ") && l.contains("NEEDS_ATTENTION")
        && l.contains("attention=UNKNOWN_AGED")), "reconcile reports " + orderId + " as a NEEDS_ATTENTION finding (UNKNOWN_AGED)");
    ev.check(report.contains("attention={UNKNOWN_AGED=1}"), "its summary counts one order needing attention for UNKNOWN_AGED");

    // the next attempt converges: NOT_FOUND, closed, FAILED
    stack.awaitStatus(orderId, "FAILED", 30_000);
    long convergedMs = System.currentTimeMillis() - upAt;
    String timeline = stack.sql.timeline(orderId);
    ev.note("converged " + convergedMs + " ms after the channel came back; timeline " + orderId + ": " + timeline);
    ev.check(timeline.endsWith("[PAYING->UNKNOWN v3 charge timeout] [UNKNOWN->FAILED v4 close CLOSED]"),
        "the charge never landed: NOT_FOUND, closed, UNKNOWN->FAILED v4 close CLOSED (" + timeline + ")");
    ev.equal("CLOSED", stack.channel.get("/charges/" + orderId).text("status"), "the channel's record of it: CLOSED");
    ev.equal("RELEASED", reservation(orderId), "its unit released");
    ev.equal(1, stack.sql.remaining(SKU), "back on sale");
    ev.note("the second stub's stats: " + stack.channel.get("/stats").raw());

    // the hand goes down
    ev.check(stack.within(() -> Attentions.row(stack, orderId) == null, 10_000), "orders.attention NULL again");
    ev.check(stack.within(() -> Attentions.searchAttribute(stack, workflowId) == null, 10_000), "the run's OrderAttention unset");
    ev.check(stack.within(() -> {
      listed[0] = cli("OrderAttention IS NOT NULL");
      listed[1] = cli("OrderAttention=\"UNKNOWN_AGED\"");
      return !listed[0].contains(workflowId) && !listed[1].contains(workflowId);
    }, 15_000), "the CLI's lists by OrderAttention no longer hold " + workflowId);
    ev.check(stack.within(() -> metric("UNKNOWN_AGED") == 0.0, 15_000),
        METRIC + "{reason=\"UNKNOWN_AGED\"} = 0 again (" + metric("UNKNOWN_AGED") + ")");
    ev.equal(200, stack.admin.get("/healthcheck").status(), "/healthcheck healthy");
    stack.awaitNothingPending(10_000);
    String clean = stack.checkReconcileClean(ev, "reconcile clean");
    ev.check(clean.contains("attention={}"), "no order needing attention in the report");
  }

  private static String status(String orderId) {
    return stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId);
  }

  private static String reservation(String orderId) {
    return stack.sql.text("SELECT r.status FROM reservation r JOIN orders o ON o.reservation_key = r.reservation_key"
        + " WHERE o.order_id = ?", orderId);
  }

  /** temporal workflow list --query q: its output (a failed run of the CLI fails the experiment). */
  private static String cli(String query) {
    try {
      TemporalCliProcess.Result r = TemporalCliProcess.run(stack, "workflow", "list", "--query", query);
      if (r.exit() != 0) throw new AssertionError("temporal workflow list --query " + query + ": exit " + r.exit() + " " + r.output());
      return r.output();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The admin port's gauge of orders needing attention for one reason; NaN when absent. */
  private static double metric(String reason) {
    String text = stack.admin.get("/metrics/prometheus").raw();
    for (String line : text.split("\n")) {
      if (line.startsWith(METRIC + "{") && line.contains("reason=\"" + reason + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return Double.NaN;
  }
}
