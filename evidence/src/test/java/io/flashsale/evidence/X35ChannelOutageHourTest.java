package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.history.v1.HistoryEvent;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * an hour of channel outage for an UNKNOWN order, on the time-skipping engine with the
 * service's default order settings (issue 37 items 2 and 3; docs/DESIGN.md §Every order ends).
 * One order's charge lands at the channel but its reply comes after the short channel deadline:
 * the pay answers UNKNOWN. Right then the channel goes away ({@link ChannelOutage}: the stub is
 * stopped, its port refuses connections, so every query fails at once and holds no clock), and
 * one simulated hour passes in 5-minute steps. The order converges in rounds at the channel, one
 * activity per round whose attempts the server retries without history events: the hour adds
 * fewer than 20 events (before rounds, ~660). The first round is bounded by
 * {@code orders.attentionAfter} (30 min): when it runs out, the order raises its hand,
 * {@code orders.attention = 'UNKNOWN_AGED'} and the search attribute {@code OrderAttention}, and
 * starts a longer round. Then the channel comes back (a stub on the same port and ledger; the held
 * callback is lost with the first stub), two minutes pass: the round's next attempt finds the
 * charge, the order is PAID by query (on a new reservation: the expiry released the unit, rule 4),
 * its hand lowered, reconcile clean.
 */
@Tag("in-memory-only") // time skipping: an hour of outage in seconds
class X35ChannelOutageHourTest {
  // the reply (5 s late) must come after the channel deadline: the short one, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline();
  @RegisterExtension static final Evidence ev = new Evidence("X-35",
      "an hour of channel outage adds < 20 events to an UNKNOWN order; it raises UNKNOWN_AGED after 30 min, converges when the channel is back");

  private static final String SKU = "sku-x35";
  /** The default first round (orders.attentionAfter) and reservation TTL. */
  private static final Duration FIRST_ROUND = Duration.ofMinutes(30);
  private static final Duration TTL = Duration.ofMinutes(1);
  private static final Duration STEP = Duration.ofMinutes(5);
  private static final int EVENTS_BOUND = 20;

  @Test
  void anHourOfChannelOutageAddsFewEventsRaisesUnknownAgedAndConverges() throws Exception {
    ev.check(!stack.devServer(), "runs on the time-skipping engine");
    ChannelOutage outage = new ChannelOutage(stack);
    stack.sku(SKU, 1, 1);
    HttpJson buyer = stack.api.login("t1", "user-3501");
    String orderId = Buyers.create(buyer, "x35", SKU, 1).text("order_id");
    String workflowId = Attentions.workflowId(stack, orderId);
    // the charge lands at once; its reply and its callback never reach the service
    Buyers.fault(stack.channel, orderId, Map.of("reply_delay_ms", 5_000, "hold_callbacks", true));

    CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, orderId));
    // the channel goes away as soon as the order is UNKNOWN: its first query (1 s later) finds no channel
    stack.awaitTrue(() -> "UNKNOWN".equals(status(orderId)), 10_000, orderId + " did not become UNKNOWN");
    outage.begin();
    long downAt = System.currentTimeMillis();
    HttpJson.Reply paid = pay.get();
    ev.note("pay answered " + paid.status() + " " + paid.raw());
    ev.equal("UNKNOWN", paid.text("status"), "the reply came after the channel timeout: the pay answers UNKNOWN");
    String timeline = stack.sql.timeline(orderId);
    ev.check(timeline.endsWith("[PAYING->UNKNOWN v3 charge timeout]"), "PAYING->UNKNOWN v3 charge timeout (" + timeline + ")");
    ev.check(!accepts(outage), "the channel's port refuses connections: every query fails at once");
    HttpJson.Reply health = stack.admin.get("/healthcheck");
    ev.note("/healthcheck with the channel down: " + health.status() + " " + health.raw());

    List<HistoryEvent> atUnknown = Histories.of(stack, workflowId);
    // past the reservation's expiry (it releases the unit, the order stays UNKNOWN), so what follows is the outage alone
    stack.skip(TTL.plusSeconds(5));
    Thread.sleep(500); // the expiry's database step runs in real time
    List<HistoryEvent> start = Histories.of(stack, workflowId);
    ev.note("history: " + atUnknown.size() + " events at UNKNOWN, " + start.size() + " after the reservation's expiry ("
        + Attentions.types(start.subList(atUnknown.size(), start.size())) + ")");
    ev.equal("UNKNOWN", status(orderId), "UNKNOWN through the expiry");
    ev.equal("RELEASED", reservation(orderId), "the expiry released the unit, the order stays UNKNOWN (rule 4)");
    ev.equal(null, Attentions.row(stack, orderId), "no attention yet");

    // one hour in 5-minute steps, the channel down all along
    Duration elapsed = TTL.plusSeconds(5); // since UNKNOWN, on the engine's clock
    String raisedAfter = null;
    for (int i = 1; i <= 12; i++) {
      stack.skip(STEP);
      elapsed = elapsed.plus(STEP);
      boolean roundOver = elapsed.compareTo(FIRST_ROUND.plusMinutes(1)) >= 0;
      if (roundOver) {
        // the round's timeout and markAttention run as the engine moves on: real time
        stack.within(() -> Attentions.row(stack, orderId) != null, 10_000);
      }
      String row = Attentions.row(stack, orderId);
      String sa = Attentions.searchAttribute(stack, workflowId);
      if (row != null && raisedAfter == null) raisedAfter = elapsed.toMinutes() + " min";
      ev.note("+" + elapsed.toMinutes() + " min after UNKNOWN: status " + status(orderId) + ", orders.attention " + row
          + ", OrderAttention " + sa + ", " + Attentions.describeRound(Attentions.pendingRound(stack, workflowId)));
      if (elapsed.compareTo(FIRST_ROUND.minusMinutes(1)) < 0) {
        ev.equal(null, row, "+" + elapsed.toMinutes() + " min, inside the first round: orders.attention NULL");
      } else if (roundOver && row == null) {
        ev.check(false, "+" + elapsed.toMinutes() + " min, the first 30 min round ran out: orders.attention set");
      }
    }
    List<HistoryEvent> end = Histories.of(stack, workflowId);
    int added = end.size() - start.size();
    List<Integer> endedRounds = Attentions.endedRoundAttempts(end);
    var pending = Attentions.pendingRound(stack, workflowId);
    int attempts = endedRounds.stream().mapToInt(Integer::intValue).sum() + (pending == null ? 0 : pending.getAttempt());
    ev.note("one hour of channel outage: +" + added + " history events (" + Attentions.types(end.subList(start.size(), end.size()))
        + "); rounds scheduled " + Attentions.roundsScheduled(end) + ", attempts of the ended rounds " + endedRounds
        + ", the round in flight at attempt " + (pending == null ? "-" : pending.getAttempt()) + ": about " + attempts
        + " attempts at the channel; hand raised at +" + raisedAfter);
    ev.check(added < EVENTS_BOUND, "an hour's channel outage adds fewer than " + EVENTS_BOUND + " events (" + added + ")");
    ev.equal("UNKNOWN", status(orderId), "still UNKNOWN: no answer from the channel, no guess");
    ev.equal("UNKNOWN_AGED", Attentions.row(stack, orderId), "the first round ran out: orders.attention = 'UNKNOWN_AGED'");
    ev.equal("UNKNOWN_AGED", Attentions.searchAttribute(stack, workflowId), "and the run's OrderAttention = UNKNOWN_AGED");
    ev.check(Attentions.roundsScheduled(end) >= 2, "a longer round started after the first ran out");

    // the channel back
    outage.end();
    ev.note("channel back after " + (System.currentTimeMillis() - downAt) + " ms of real time (one hour and "
        + TTL.plusSeconds(5).toSeconds() + " s of the engine's)");
    stack.skip(Duration.ofMinutes(2));
    stack.awaitStatus(orderId, "PAID", 30_000);
    ev.check(stack.within(() -> Attentions.row(stack, orderId) == null, 10_000), "settled: orders.attention NULL again");
    ev.check(stack.within(() -> Attentions.searchAttribute(stack, workflowId) == null, 10_000),
        "settled: the run's OrderAttention unset");
    timeline = stack.sql.timeline(orderId);
    ev.note("timeline " + orderId + ": " + timeline);
    ev.check(timeline.endsWith("[PAYING->UNKNOWN v3 charge timeout] [UNKNOWN->PAID v4 query re-reserved " + orderId + "/r2]"),
        "the charge had landed: UNKNOWN->PAID v4 by query, re-reserved (" + timeline + ")");
    ev.equal(orderId + "/r2", stack.sql.text("SELECT reservation_key FROM orders WHERE order_id = ?", orderId),
        "the charge came after the expiry: a new reservation (rule 4)");
    ev.equal("CONFIRMED", reservation(orderId), "and it is CONFIRMED");
    ev.equal(0, stack.sql.remaining(SKU), "the one unit is sold");
    ev.equal("CHARGED", stack.channel.get("/charges/" + orderId).text("status"), "the channel's ledger kept the charge");
    ev.equal(1L, chargeRows(orderId), "one charge row in the channel's statement");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM payment_notification WHERE merchant_order = ?", orderId),
        "no callback: the held one went with the first stub, the query alone settled the order");
    ev.note("the second stub's stats: " + stack.channel.get("/stats").raw());
    ev.equal(0, Buyers.chargeRequests(stack.channel, orderId), "no second charge");
    List<HistoryEvent> settled = Histories.of(stack, workflowId);
    ev.note("history at PAID: " + settled.size() + " events in all; attempts of the ended rounds "
        + Attentions.endedRoundAttempts(settled));
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

  private static long chargeRows(String orderId) {
    long n = 0;
    for (var row : stack.channel.get("/statement").body().path("rows")) {
      if (orderId.equals(row.path("merchant_order").asText()) && "CHARGE".equals(row.path("type").asText())) n++;
    }
    return n;
  }

  /** Whether the channel's port takes a connection. */
  private static boolean accepts(ChannelOutage outage) {
    int port = java.net.URI.create(stack.wiring.channelUrl()).getPort();
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 1_000);
      return true;
    } catch (java.io.IOException refused) {
      return false;
    }
  }
}
