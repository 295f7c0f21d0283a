package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.workflows.OrderActivities;
import io.temporal.api.history.v1.HistoryEvent;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * a database outage of minutes, default settings, does not grow an order's history with its
 * length. One order's charge reply and another's reservation expiry come while the service's
 * database refuses connections for 150 s. A local database step gives up after
 * LOCAL_DB_STEP_BOUND (20 s) and goes on as an activity task, whose retries the server keeps
 * without events; before, the step retried locally and the worker completed a workflow task every
 * ~8 s to keep it (3 events each, ~22 a minute). The bound per order over the outage, derived:
 * two stuck steps at most (the one holding the lock, and the expiry), each ≤ 3 keeping tasks × 3
 * events + its marker + the activity task's scheduling and a workflow task (≤ 16), plus the expiry
 * timer firing and its workflow task (4), plus the pay update's acceptance (≤ 4): 40, whatever the
 * outage's length. Afterwards every order converges. Dev server only: real history lengths.
 *
 * <p>A backlog on the orders' queue: four more orders expire in the outage, so their expiry steps
 * go on as activity tasks retrying with backoff there. As the database comes back, four buyers
 * create and pay at once: each charge is scheduled on the channel's own queue (docs/DESIGN.md
 * §Every order ends) and starts there whatever the orders' queue holds; none ends FAILED as
 * "charge never started". (A pay sent while the database is down is answered 503 by the API,
 * which reads the order first, so it never queues in a run.)
 */
@Tag("dev-server-only")
class X27OutageHistoryBoundTest {
  @RegisterExtension static final Stack stack = new Stack().with("channel.timeout", "5s");
  @RegisterExtension static final Evidence ev = new Evidence("X-27",
      "a database outage of minutes adds a bounded number of events per order; every order converges");

  private static final String SKU = "sku-x26";
  private static final long OUTAGE_MS = 150_000;
  /** Events one order may gain during the outage, however long it lasts (derived above). */
  private static final int EVENTS_BOUND = 40;
  /** Orders whose pays come in the outage. */
  private static final int QUEUED = 4;

  private static Connection admin() throws Exception {
    String url = stack.wiring.jdbcUrl().replaceFirst("/postgres(\\?|$)", "/template1$1");
    return DriverManager.getConnection(url, "postgres", "");
  }

  private static long eventMillis(HistoryEvent e) {
    return e.getEventTime().getSeconds() * 1_000 + e.getEventTime().getNanos() / 1_000_000;
  }

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  @Test
  void anOutageOfMinutesAddsABoundedNumberOfEventsPerOrder() throws Exception {
    ev.check(stack.devServer(), "runs on the dev server");
    ev.check(OrderActivities.LOCAL_DB_STEP_BOUND.toMillis() * 3 < OUTAGE_MS,
        "the outage outlasts a local step's bound several times (" + OrderActivities.LOCAL_DB_STEP_BOUND + ")");
    stack.sku(SKU, 5 + 2 * QUEUED, 3 + QUEUED);
    HttpJson buyer = stack.api.login("t1", "user-2601");
    String paying = Buyers.create(buyer, "x26-pay", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, paying, Map.of("reply_delay_ms", 2_000));
    String expiring = Buyers.create(buyer, "x26-expire", SKU, 1).text("order_id");
    List<String> backlog = new java.util.ArrayList<>();
    for (int i = 0; i < QUEUED; i++) backlog.add(Buyers.create(buyer, "x26-backlog-" + i, SKU, 1).text("order_id"));
    CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, paying));
    stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, paying) == 1, 10_000, "no charge request");
    long down;
    long up;
    try (Connection c = admin(); Statement s = c.createStatement()) {
      s.execute("ALTER DATABASE postgres ALLOW_CONNECTIONS false");
      s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'postgres'"
          + " AND pid <> pg_backend_pid()");
      down = System.currentTimeMillis();
      ev.note("the service's database refuses connections from now on for " + OUTAGE_MS + " ms: " + paying
          + "'s charge reply and " + expiring + "'s reservation expiry (TTL 60 s) come in the outage, and "
          + backlog + "'s expiries");
      Thread.sleep(OUTAGE_MS);
      s.execute("ALTER DATABASE postgres ALLOW_CONNECTIONS true");
      up = System.currentTimeMillis();
    }
    ev.note("database back after " + (up - down) + " ms; the pay request answered " + pay.get().status());
    // buyers who come as the database is back, while the backlog's expiries still retry
    HttpJson late = stack.api.login("t1", "user-2602");
    List<String> queued = new java.util.ArrayList<>();
    List<CompletableFuture<HttpJson.Reply>> pays = new java.util.ArrayList<>();
    for (int i = 0; i < QUEUED; i++) {
      String id = Buyers.create(late, "x26-queued-" + i, SKU, 1).text("order_id");
      queued.add(id);
      pays.add(CompletableFuture.supplyAsync(() -> Buyers.pay(late, id)));
    }
    for (int i = 0; i < QUEUED; i++) ev.note(queued.get(i) + " paid as the database came back: " + pays.get(i).get().status());

    stack.awaitStatus(paying, "PAID", 120_000);
    stack.awaitStatus(expiring, "CANCELLED", 120_000);
    ev.note("timeline " + paying + ": " + stack.sql.timeline(paying));
    ev.note("timeline " + expiring + ": " + stack.sql.timeline(expiring));
    ev.check(stack.sql.timeline(paying).endsWith("[PAYING->PAID v3 charge reply]"),
        paying + ": the charge reply was applied after the outage: PAID");
    ev.check(stack.sql.timeline(expiring).contains("CREATED->CANCELLED"), expiring + ": expired after the outage: CANCELLED");

    for (String id : backlog) stack.awaitStatus(id, "CANCELLED", 120_000);
    for (String id : queued) {
      stack.awaitStatus(id, "PAID", 120_000);
      String timeline = stack.sql.timeline(id);
      ev.check(!timeline.contains("never started"), id + ": queued in the outage, its charge started: " + timeline);
      List<HistoryEvent> events = Histories.of(stack, workflowId(id));
      List<String> chargeQueues = events.stream()
          .filter(e -> e.getEventType() == io.temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
          .filter(e -> e.getActivityTaskScheduledEventAttributes().getActivityType().getName().equals("Charge"))
          .map(e -> e.getActivityTaskScheduledEventAttributes().getTaskQueue().getName()).toList();
      ev.equal(List.of(io.flashsale.workflows.WorkflowIds.CHANNEL_TASK_QUEUE), chargeQueues,
          id + ": its charge was scheduled on the channel's own queue");
    }
    for (String id : List.of(paying, expiring)) {
      List<HistoryEvent> events = Histories.of(stack, workflowId(id));
      long during = events.stream().filter(e -> eventMillis(e) >= down && eventMillis(e) <= up).count();
      long scheduled = Histories.count(events, io.temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
      ev.note(id + ": " + during + " events during the outage, " + events.size() + " in all, "
          + scheduled + " activity tasks scheduled");
      ev.check(during <= EVENTS_BOUND, id + ": at most " + EVENTS_BOUND + " events during a " + OUTAGE_MS / 1000
          + " s outage (" + during + "; keeping a local step alive would have cost ~22 a minute)");
    }
    ev.equal(1, Buyers.chargeRequests(stack.channel, paying), "one charge at the channel");
    stack.awaitNothingPending(30_000);
    stack.checkReconcileClean(ev, "reconcile clean");
  }
}
