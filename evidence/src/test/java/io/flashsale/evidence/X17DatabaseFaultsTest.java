package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * database faults under a paid order. (1) An outage of 20 s right after the charge: the
 * database activity backs off and keeps retrying (a bounded number of attempts, no hot loop) and
 * the order converges to PAID once PostgreSQL is back. (2) A data error no retry can fix
 * (a constraint violation, SQLState 23514) when the charge is applied: one attempt, the order
 * stays PAYING (never FAILED: the channel charged), the run keeps going and shows
 * OrderAttention=DataError; once the row can be written, the slow retry makes it PAID.
 */
class X17DatabaseFaultsTest {
  @RegisterExtension static final Stack stack = new Stack().with("channel.timeout", "5s");
  @RegisterExtension static final Evidence ev = new Evidence("X-17", "database outage converges; data error flags, never FAILED");

  private static final String SKU = "sku-x17";

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  /** A connection to another database of the same server, to switch the service's database off and on. */
  private static Connection admin() throws Exception {
    String url = stack.wiring.jdbcUrl().replaceFirst("/postgres(\\?|$)", "/template1$1");
    return DriverManager.getConnection(url, "postgres", "");
  }

  private static void exec(String sql) {
    stack.wiring.db().inTx(c -> {
      try (Statement s = c.createStatement()) {
        s.execute(sql);
      }
      return null;
    });
  }

  /** A local database step's marker (the default since local database steps): its type, attempt and failure. */
  private record LocalStep(String type, int attempt, boolean failed) {}

  private static List<LocalStep> localSteps(List<HistoryEvent> events) {
    List<LocalStep> steps = new java.util.ArrayList<>();
    for (HistoryEvent e : events) {
      if (e.getEventType() != EventType.EVENT_TYPE_MARKER_RECORDED
          || !e.getMarkerRecordedEventAttributes().getMarkerName().equals("LocalActivity")) {
        continue;
      }
      var details = e.getMarkerRecordedEventAttributes().getDetailsMap();
      try {
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        String type = json.readTree(details.get("type").getPayloads(0).getData().toStringUtf8()).asText();
        int attempt = json.readTree(details.get("meta").getPayloads(0).getData().toStringUtf8()).path("atpt").asInt();
        steps.add(new LocalStep(type, attempt, e.getMarkerRecordedEventAttributes().hasFailure()));
      } catch (java.io.IOException | RuntimeException unreadable) {
        throw new AssertionError("unreadable local activity marker " + e.getEventId(), unreadable);
      }
    }
    return steps;
  }

  /** Failed attempts of the step that applied a channel answer: activity task failures and failed local steps. */
  private static long applyFailures(List<HistoryEvent> events) {
    return Histories.count(events, EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED)
        + localSteps(events).stream().filter(s -> s.type().equals("ApplyChannelAnswer") && s.failed()).count();
  }

  /**
   * The last attempt number of the step that applied a channel answer: the server counts an
   * activity task's retries, a local step's marker carries its attempt.
   */
  private static int applyAttempts(List<HistoryEvent> events) {
    int attempts = localSteps(events).stream().filter(s -> s.type().equals("ApplyChannelAnswer"))
        .mapToInt(LocalStep::attempt).max().orElse(0);
    for (int i = 0; i < events.size(); i++) {
      HistoryEvent e = events.get(i);
      if (e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
          && e.getActivityTaskScheduledEventAttributes().getActivityType().getName().equals("ApplyChannelAnswer")) {
        long scheduledId = e.getEventId();
        for (HistoryEvent s : events) {
          if (s.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
              && s.getActivityTaskStartedEventAttributes().getScheduledEventId() == scheduledId) {
            attempts = Math.max(attempts, s.getActivityTaskStartedEventAttributes().getAttempt());
          }
        }
      }
    }
    return attempts;
  }

  private static String attention(String workflowId) {
    var fields = stack.wiring.temporal().service().blockingStub().describeWorkflowExecution(
            io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest.newBuilder().setNamespace("default")
                .setExecution(io.temporal.api.common.v1.WorkflowExecution.newBuilder().setWorkflowId(workflowId)).build())
        .getWorkflowExecutionInfo().getSearchAttributes().getIndexedFieldsMap();
    var payload = fields.get("OrderAttention");
    if (payload == null) return null;
    String v = payload.getData().toStringUtf8().replace("\"", "");
    return v.isEmpty() || v.equals("null") ? null : v;
  }

  @Test
  void anOutageIsRetriedUntilTheOrderConverges() throws Exception {
    stack.sku(SKU, 5, 3);
    HttpJson alice = stack.api.login("t1", "user-1701");
    String a = Buyers.create(alice, "x17-a", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, a, Map.of("reply_delay_ms", 2_000));
    CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(alice, a));
    stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, a) == 1, 10_000, "no charge request");
    long down;
    try (Connection c = admin(); Statement s = c.createStatement()) {
      s.execute("ALTER DATABASE postgres ALLOW_CONNECTIONS false");
      s.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'postgres'"
          + " AND pid <> pg_backend_pid()");
      down = System.currentTimeMillis();
      ev.note("PostgreSQL refuses the service's database from now on; the charge reply comes in the outage");
      Thread.sleep(20_000);
      s.execute("ALTER DATABASE postgres ALLOW_CONNECTIONS true");
    }
    ev.note("database back after " + (System.currentTimeMillis() - down) + " ms");
    HttpJson.Reply answer = pay.get();
    ev.note("the pay request answered " + answer.status() + " " + answer.raw());
    stack.awaitStatus(a, "PAID", 60_000);
    String ta = stack.sql.timeline(a);
    ev.note("timeline " + a + ": " + ta);
    ev.check(ta.endsWith("[PAYING->PAID v3 charge reply]"), "the charge reply was applied after the outage: PAID");
    // the row is PAID as soon as the step commits; its marker (or its activity task's started
    // event) reaches history only when the step has returned to the workflow: wait for it
    String wa = workflowId(a);
    stack.awaitTrue(() -> applyAttempts(Histories.of(stack, wa)) > 0, 30_000, "the applying step never reached history");
    int attempts = applyAttempts(Histories.of(stack, wa));
    ev.note("attempts of the activity that applied the charge reply: " + attempts);
    ev.check(attempts >= 2, "it was retried through the outage (" + attempts + " attempts)");
    ev.check(attempts <= 15, "with backoff, not in a hot loop (" + attempts + " attempts in about 20 s)");
    ev.equal(1, Buyers.chargeRequests(stack.channel, a), "one charge at the channel");
    stack.awaitNothingPending(10_000);
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  @Test
  void aDataErrorFlagsTheOrderAndNeverFailsIt() throws Exception {
    stack.sku(SKU + "-b", 5, 3);
    HttpJson bob = stack.api.login("t1", "user-1702");
    String b = Buyers.create(bob, "x17-b", SKU + "-b", 1).text("order_id");
    exec("CREATE FUNCTION x17_refuse_paid() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
        + " IF NEW.order_id = '" + b + "' AND NEW.status = 'PAID' THEN"
        + " RAISE EXCEPTION 'x17: row refused' USING ERRCODE = '23514'; END IF; RETURN NEW; END $$");
    exec("CREATE TRIGGER x17_refuse_paid BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION x17_refuse_paid()");
    HttpJson.Reply pay = Buyers.pay(bob, b);
    ev.note("the pay request answered " + pay.status() + " " + pay.raw());
    String wf = workflowId(b);
    stack.awaitTrue(() -> "DataError".equals(attention(wf)), 15_000, "no OrderAttention");
    ev.equal("DataError", attention(wf), "the run shows OrderAttention=DataError");
    ev.equal("PAYING", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", b),
        "the charged order stays PAYING, not FAILED");
    ev.equal("CHARGED", stack.channel.get("/charges/" + b).text("status"), "the channel did charge it");
    ev.equal("RUNNING", stack.workflowStatus(wf), "the run keeps going");
    List<HistoryEvent> events = Histories.of(stack, wf);
    ev.equal(1L, applyFailures(events), "one failed attempt, not retried");
    ev.equal(1, applyAttempts(events), "the data error was not retried by the activity");
    if (stack.devServer()) {
      stack.awaitTrue(() -> {
        try {
          return TemporalCliProcess.run(stack, "workflow", "list", "--query", "OrderAttention=\"DataError\"")
              .output().contains(wf);
        } catch (Exception e) {
          return false;
        }
      }, 15_000, "not listed by OrderAttention");
      ev.note("temporal workflow list --query 'OrderAttention=\"DataError\"' lists " + wf);
    }
    exec("DROP TRIGGER x17_refuse_paid ON orders");
    exec("DROP FUNCTION x17_refuse_paid()");
    ev.note("the operator repaired the data; the step is tried again after 60 s");
    stack.skip(Duration.ofSeconds(61));
    stack.awaitStatus(b, "PAID", 30_000);
    stack.awaitTrue(() -> attention(wf) == null, 15_000, "OrderAttention still set");
    ev.check(attention(wf) == null, "the flag is cleared once the step went through");
    String tb = stack.sql.timeline(b);
    ev.note("timeline " + b + ": " + tb);
    ev.check(tb.endsWith("[PAYING->PAID v3 charge reply]"), "PAID by the retried step");
    stack.awaitNothingPending(10_000);
    stack.checkReconcileClean(ev, "reconcile clean");
  }
}
