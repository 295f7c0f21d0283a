package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the events one order leaves on each path, counted on histories that ran to their end on
 * the dev server (issue 37 item 6). Each path is one order through the real API and the channel
 * stub (its faults as the C29 experiments set them), run until its workflow closed
 * (WORKFLOW_EXECUTION_COMPLETED): paid with its callback held; paid with its callback released
 * after the reply (a copy of an applied success, answered at arrival by the API: no signal, the
 * paid path's events); declined with its callback held, and with it released after the reply (a
 * signal); cancelled by the buyer; expired; UNKNOWN then PAID by query (the
 * reply delayed past the charge timeout, as C29-04); UNKNOWN then NOT_FOUND, closed, FAILED (the
 * request held, as C29-05). The service's default order settings but two: the late-notice window
 * is 2 s instead of 10 min (one timer either way: it starts, and fires, once per final status) and
 * the reservation TTL 5 s instead of 60 s, so the expiry path ends in seconds. The TTL's timer of
 * every other path is cancelled at its first other deadline whatever its length: a paid order is
 * run once more after a restart with the default TTL (60 s) and must leave the same event types.
 * Each history's count and types are printed, and it is written as
 * {@code path-dev-server-<name>.json} (the histories folder of the dev-server run,
 * {@code histories.dir}); the recorded copies in src/test/resources/histories replay in X-23.
 */
@Tag("dev-server-only")
class X34EventsPerPathTest {
  // the UNKNOWN paths need the charge to time out (a reply delayed past it, a request held 6 s): the
  // short channel deadline (1 s)
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline()
      .with("orders.lateNoticeWindow", "2s").with("orders.reservationTtl", "5s");
  @RegisterExtension static final Evidence ev = new Evidence("X-34",
      "events per path on histories that ran to their end (dev server, default settings but a 2 s late-notice window, a 5 s TTL)");

  private static final String SKU = "sku-x34";
  /** From the last step (a pay's answer, a cancel, a create) to the run's end: TTL 5 s + window 2 s, with room. */
  private static final long CLOSE_BOUND_MS = 30_000;

  /** Each path's history: its name, its event count and types. */
  private final Map<String, List<HistoryEvent>> paths = new LinkedHashMap<>();

  @Test
  void eachPathRunToItsEnd() throws Exception {
    ev.check(stack.devServer(), "runs on the dev server");
    stack.sku(SKU, 20, 10);
    HttpJson buyer = stack.api.login("t1", "user-3401");
    ev.note("order settings: the service's defaults, but orders.lateNoticeWindow 2s (default 10m: one timer"
        + " either way) and orders.reservationTtl 5s (default 60s: the expiry path only waits on it)");

    // the expiry path first: its 5 s run while the others go
    String expired = Buyers.create(buyer, "x34-expired", SKU, 1).text("order_id");

    String paid = Buyers.create(buyer, "x34-paid", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, paid, Map.of("hold_callbacks", true));
    ev.equal("PAID", Buyers.pay(buyer, paid).text("status"), "paid: the pay answers PAID");
    ended("paid", paid, "PAID");

    String notice = Buyers.create(buyer, "x34-paid-notice", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, notice, Map.of("hold_callbacks", true));
    ev.equal("PAID", Buyers.pay(buyer, notice).text("status"), "paid-notice-after-reply: the pay answers PAID");
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", notice, "order", "fifo"));
    List<HistoryEvent> noticed = ended("paid-notice-after-reply", notice, "PAID");
    // a PAID run ends at once, so the released callback may come after the run closed
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM payment_notification WHERE merchant_order = ?"
        + " AND effect IS NOT NULL", notice) >= 1, 30_000, "paid-notice-after-reply: its callback was not answered");
    ev.equal(Map.of("DUPLICATE PAID", 1),
        stack.sql.histogram("SELECT effect FROM payment_notification WHERE merchant_order = ?", notice),
        "paid-notice-after-reply: its callback, released after the reply, applied as DUPLICATE PAID");
    // a copy of a success the order already applied is answered at arrival by the API, not signalled
    // (docs/DESIGN.md, "Copies of an applied notice"): the paid path's history, event for event
    ev.equal(0L, Histories.count(noticed, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
        "paid-notice-after-reply: the notice was answered at arrival, no signal in its history");
    ev.equal(types(paths.get("paid")), types(noticed), "paid-notice-after-reply: the same events as paid");

    String declined = Buyers.create(buyer, "x34-declined", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, declined, Map.of("decline", true, "hold_callbacks", true));
    ev.equal("FAILED", Buyers.pay(buyer, declined).text("status"), "declined: the pay answers FAILED");
    ended("declined", declined, "FAILED");

    // the stub's callback of a decline is not a copy of an applied success: it is signalled
    String declinedNotice = Buyers.create(buyer, "x34-declined-notice", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, declinedNotice, Map.of("decline", true, "hold_callbacks", true));
    ev.equal("FAILED", Buyers.pay(buyer, declinedNotice).text("status"),
        "declined-notice-after-reply: the pay answers FAILED");
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", declinedNotice, "order", "fifo"));
    List<HistoryEvent> declineNoticed = ended("declined-notice-after-reply", declinedNotice, "FAILED");
    ev.note("declined-notice-after-reply: notice effects " + stack.sql.histogram(
        "SELECT effect FROM payment_notification WHERE merchant_order = ?", declinedNotice));
    ev.equal(1L, Histories.count(declineNoticed, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
        "declined-notice-after-reply: its callback, released after the reply, is one signal in its history");

    String cancelled = Buyers.create(buyer, "x34-cancelled", SKU, 1).text("order_id");
    ev.equal("CANCELLED", Buyers.cancel(buyer, cancelled).text("status"), "cancelled: the cancel answers CANCELLED");
    ended("cancelled", cancelled, "CANCELLED");

    String queried = Buyers.create(buyer, "x34-unknown-query-paid", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, queried, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(buyer, queried).text("status"), "unknown-query-paid: the pay answers UNKNOWN");
    ended("unknown-query-paid", queried, "PAID");
    ev.equal("[-->CREATED v1 create] [CREATED->PAYING v2 pay] [PAYING->UNKNOWN v3 charge timeout] [UNKNOWN->PAID v4 query]",
        stack.sql.timeline(queried), "unknown-query-paid: PAID by the query");

    String closed = Buyers.create(buyer, "x34-unknown-close-failed", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, closed, Map.of("hold_request_ms", 6_000));
    ev.equal("UNKNOWN", Buyers.pay(buyer, closed).text("status"), "unknown-close-failed: the pay answers UNKNOWN");
    ended("unknown-close-failed", closed, "FAILED");
    ev.equal("[-->CREATED v1 create] [CREATED->PAYING v2 pay] [PAYING->UNKNOWN v3 charge timeout] [UNKNOWN->FAILED v4 close CLOSED]",
        stack.sql.timeline(closed), "unknown-close-failed: NOT_FOUND, closed, FAILED");

    ended("expired", expired, "CANCELLED");
    ev.check(stack.sql.timeline(expired).contains("[CREATED->CANCELLED v2 "), "expired: CREATED->CANCELLED v2 ("
        + stack.sql.timeline(expired) + ")");

    // the same paid path with the default TTL (60 s): the TTL's timer is cancelled at PAID either way
    stack.stop();
    stack.without("orders.reservationTtl");
    stack.start();
    HttpJson again = stack.api.login("t1", "user-3401");
    String paid60 = Buyers.create(again, "x34-paid-ttl-60s", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, paid60, Map.of("hold_callbacks", true));
    ev.equal("PAID", Buyers.pay(again, paid60).text("status"), "paid, TTL 60 s: the pay answers PAID");
    List<HistoryEvent> withDefaultTtl = await("paid with the default TTL", paid60, "PAID");
    ev.equal(types(paths.get("paid")), types(withDefaultTtl),
        "the paid path leaves the same events with the default TTL (60 s) as with 5 s: " + withDefaultTtl.size()
            + " and " + paths.get("paid").size());

    StringBuilder table = new StringBuilder("events per path (dev server, to WORKFLOW_EXECUTION_COMPLETED):");
    paths.forEach((name, events) -> table.append(" ").append(name).append('=').append(events.size()));
    ev.note(table.toString());
  }

  /** The path's run closed on its final status: notes and records its history, which it returns. */
  private List<HistoryEvent> ended(String name, String orderId, String finalStatus) throws Exception {
    List<HistoryEvent> events = await(name, orderId, finalStatus);
    paths.put(name, events);
    stack.recordHistory(orderId, "path-dev-server-" + name);
    return events;
  }

  /** Waits for the run to close; checks it completed on the final status; notes its events. */
  private List<HistoryEvent> await(String name, String orderId, String finalStatus) throws Exception {
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
    long from = System.currentTimeMillis();
    boolean closed = stack.within(() -> !"RUNNING".equals(stack.workflowStatus(workflowId)), CLOSE_BOUND_MS);
    long took = System.currentTimeMillis() - from;
    List<HistoryEvent> events = Histories.of(stack, workflowId);
    ev.note(name + ": " + events.size() + " events (closed " + took + " ms after its last step; timeline "
        + stack.sql.timeline(orderId) + "): " + types(events));
    ev.check(closed, name + ": the run closed within " + CLOSE_BOUND_MS + " ms (" + stack.workflowStatus(workflowId) + ")");
    ev.equal("COMPLETED", stack.workflowStatus(workflowId), name + ": the run completed");
    ev.equal(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, events.get(events.size() - 1).getEventType(),
        name + ": its history ends with WORKFLOW_EXECUTION_COMPLETED");
    ev.equal(finalStatus, stack.sql.text("SELECT status FROM orders WHERE order_id = ?", orderId),
        name + ": the order ended " + finalStatus);
    return events;
  }

  /** The history's event types, shortened, in order. */
  private static String types(List<HistoryEvent> events) {
    return events.stream().map(e -> e.getEventType().name().replace("EVENT_TYPE_", "")
        .replace("WORKFLOW_EXECUTION_", "WE_").replace("WORKFLOW_TASK_", "WT_")).collect(Collectors.joining(" "));
  }
}
