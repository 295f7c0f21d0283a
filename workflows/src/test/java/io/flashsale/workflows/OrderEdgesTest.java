package io.flashsale.workflows;

import static io.flashsale.workflows.OrderTestHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.OrderStatus;
import io.flashsale.paymentchannel.ChannelResult;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every non-final status has a deadline and an owner (docs/DESIGN.md §Every order ends), on the
 * time-skipping engine with the default settings: a PAYING row no pay of the run holds, an UNKNOWN
 * order through an hour's channel outage, a refund the channel refuses or never confirms.
 */
class OrderEdgesTest {
  private static final OrderSettings SETTINGS = OrderSettings.defaults();

  private final FakeOrderBackend backend = new FakeOrderBackend();
  @RegisterExtension final TestWorkflowExtension engine = OrderTestHarness.extension(backend);

  private OrderTestHarness harness;
  private TestWorkflowEnvironment env;

  @BeforeEach
  void setUp(TestWorkflowEnvironment env, Worker worker) {
    harness = new OrderTestHarness(env, worker, backend);
    this.env = env;
  }

  private List<String> versionMarkers() {
    return harness.history().stream().filter(e -> e.getEventType() == EventType.EVENT_TYPE_MARKER_RECORDED)
        .filter(e -> e.getMarkerRecordedEventAttributes().getMarkerName().equals("Version"))
        .map(e -> e.getMarkerRecordedEventAttributes().getDetailsMap().get("changeId").getPayloads(0).getData()
            .toStringUtf8().replace("\"", ""))
        .toList();
  }

  private String attention() {
    var payload = harness.describe().getSearchAttributes().getIndexedFieldsMap().get("OrderAttention");
    if (payload == null) return null;
    String json = payload.getData().toStringUtf8();
    return json.isEmpty() || json.equals("null") || json.equals("[]") ? null : json.replace("\"", "");
  }

  private void awaitEnd() {
    WorkflowStub.fromTyped(harness.client.newWorkflowStub(OrderWorkflow.class, OrderTestHarness.WF))
        .getResult(Void.class);
  }

  @Test
  void aPayingRowNoPayOfTheRunHoldsBecomesUnknownAtExpiryAndConverges() throws Exception {
    // the pay's beginPay committed in a workflow task that never completed and its update was
    // dropped: the run still holds CREATED v1
    OrderWorkflow wf = harness.created(SETTINGS);
    backend.commitLostPay();
    backend.queryAnswer = ChannelResult.NOT_FOUND; // no charge ever left
    env.sleep(SETTINGS.reservationTtl().plusSeconds(5));
    waitFor(() -> backend.row().status() == OrderStatus.FAILED);
    assertEquals(List.of(OrderStatus.CREATED, OrderStatus.PAYING, OrderStatus.UNKNOWN, OrderStatus.FAILED),
        backend.path(), "PAYING without a pay became UNKNOWN, then a close settled it");
    assertEquals(1, backend.count("close"), "NOT_FOUND is closed first, never taken as not charged");
    assertEquals(0, backend.count("charge"), "nothing charged");
    // a pay retried by the buyer gets a definite answer
    assertEquals(CommandOutcome.REJECTED, harness.orders(SETTINGS).pay(OrderTestHarness.WF, "pay-2").outcome());
    awaitEnd();
    assertTrue(versionMarkers().contains(ChangeIds.OWNED_DEADLINES), versionMarkers().toString());
    harness.recordHistory("wf-lost-pay-unknown-at-expiry-closed-failed");
  }

  @Test
  void aPayingRowFoundAtAWakeUpBeforeTheExpiryConvergesToo() throws Exception {
    harness.created(SETTINGS);
    backend.commitLostPay();
    backend.queryAnswer = ChannelResult.CHARGED; // the charge did leave and land
    OrderWorkflow wf = harness.client.newWorkflowStub(OrderWorkflow.class, OrderTestHarness.WF);
    // a notice the rules ignore wakes the loop; its step reads the row back: PAYING, no pay in flight
    wf.paymentNotification(new io.flashsale.domain.Notice(3, "ntf-3", "PENDING", 1990, null));
    waitFor(() -> backend.row().status() == OrderStatus.PAID);
    assertEquals(List.of(OrderStatus.CREATED, OrderStatus.PAYING, OrderStatus.UNKNOWN, OrderStatus.PAID),
        backend.path());
    assertEquals(0, backend.count("expireReservation"), "settled before the reservation's deadline");
    awaitEnd();
    harness.recordHistory("wf-lost-pay-found-at-a-wake-up-paid");
  }

  @Test
  void aDeadlineAlreadyPastActsWithoutATimer() throws Exception {
    // an adopted create: its reservation ran from the run's start, so its deadline is past when it is adopted
    harness.startRun(SETTINGS);
    backend.commitLostCreate("t1", "user-1", "sku-1");
    env.sleep(SETTINGS.reservationTtl().plusSeconds(1));
    awaitEnd();
    assertEquals(OrderStatus.CANCELLED, backend.row().status());
    long timers = harness.events(EventType.EVENT_TYPE_TIMER_STARTED);
    System.out.println("adopted create, expired at once: " + harness.history().size() + " events, " + timers + " timers");
    assertEquals(1, timers, "only the create's bound: no timer for a deadline already past");
    harness.recordHistory("wf-adopted-lost-create-past-deadline");
  }

  @Test
  void anHourOfChannelOutageAddsFewEventsAndRaisesUnknownAged() throws Exception {
    backend.chargeAnswer = ChannelResult.UNKNOWN;
    backend.queryAnswer = ChannelResult.UNKNOWN; // the channel is down: no answer to any query
    OrderWorkflow wf = harness.created(SETTINGS);
    assertEquals(OrderStatus.UNKNOWN, wf.pay().status());
    // past the reservation's expiry, so what follows is the outage alone
    env.sleep(SETTINGS.reservationTtl().plusSeconds(5));
    int before = harness.history().size();
    long queriesBefore = backend.count("converge");
    env.sleep(Duration.ofHours(1));
    int added = harness.history().size() - before;
    long attempts = backend.count("converge") - queriesBefore;
    System.out.println("one order, one hour of channel outage: +" + added + " history events, "
        + attempts + " attempts at the channel");
    assertTrue(added < 20, "an hour's outage adds fewer than 20 events (" + added + ")");
    assertTrue(attempts >= 30, "the channel was still asked all along (" + attempts + " attempts)");
    assertEquals("UNKNOWN_AGED", attention(), "the first round ran out: the order raised its hand");
    assertEquals("UNKNOWN_AGED", backend.attention, "and its row says why");
    assertEquals(OrderStatus.UNKNOWN, backend.row().status());

    backend.queryAnswer = ChannelResult.CHARGED; // the channel is back
    env.sleep(Duration.ofMinutes(2));
    waitFor(() -> backend.row().status() == OrderStatus.PAID);
    waitFor(() -> backend.attention == null);
    waitFor(() -> attention() == null); // settled: the hand is lowered (the workflow unsets it after the step)
    awaitEnd();
    harness.recordHistory("wf-unknown-hour-outage-attention-paid");
  }

  @Test
  void aRefusedRefundRaisesItsHandAtOnceAndIsTriedAgainLater() throws Exception {
    backend.stockLost = true; // charged, but the unit was sold meanwhile: the money goes back
    backend.refundRefused = true;
    OrderWorkflow wf = harness.created(SETTINGS);
    assertEquals(OrderStatus.REFUNDING, wf.pay().status());
    waitFor(() -> "REFUND_REFUSED".equals(backend.attention));
    // the row is written by the step, the search attribute by the workflow once the step returned
    waitFor(() -> "REFUND_REFUSED".equals(attention()));
    assertEquals(1, backend.count("refund"), "a definite refusal is not retried at once");
    int before = harness.history().size();
    env.sleep(Duration.ofHours(1));
    System.out.println("a refused refund over one hour: +" + (harness.history().size() - before)
        + " history events, " + backend.count("refund") + " refund attempts");
    assertTrue(backend.count("refund") >= 2, "tried again after the pause");
    assertEquals(OrderStatus.REFUNDING, backend.row().status());

    backend.refundRefused = false; // an operator settled it with the channel
    env.sleep(SETTINGS.roundBound(1));
    waitFor(() -> backend.row().status() == OrderStatus.REFUNDED);
    waitFor(() -> backend.attention == null);
    waitFor(() -> attention() == null);
    awaitEnd();
    harness.recordHistory("wf-refund-refused-attention-refunded");
  }

  @Test
  void aRefundNeverConfirmedForAnHourRaisesRefundAged() throws Exception {
    backend.stockLost = true;
    backend.refundFailures.set(Integer.MAX_VALUE);
    OrderWorkflow wf = harness.created(SETTINGS);
    assertEquals(OrderStatus.REFUNDING, wf.pay().status());
    int before = harness.history().size();
    env.sleep(Duration.ofHours(1));
    int added = harness.history().size() - before;
    System.out.println("a refund unconfirmed for one hour: +" + added + " history events, "
        + backend.count("refund") + " refund attempts");
    assertTrue(added < 20, "an hour adds fewer than 20 events (" + added + ")");
    assertEquals("REFUND_AGED", attention());
    backend.refundFailures.set(0);
    env.sleep(Duration.ofMinutes(2));
    waitFor(() -> backend.row().status() == OrderStatus.REFUNDED);
    waitFor(() -> backend.attention == null);
    awaitEnd();
    harness.recordHistory("wf-refund-aged-attention-refunded");
  }

  @Test
  void aNoticeSettlesAnUnknownOrderWhileItsRoundRunsAndTheRoundStops() throws Exception {
    backend.chargeAnswer = ChannelResult.UNKNOWN;
    backend.queryAnswer = ChannelResult.UNKNOWN;
    backend.noticesApplyRules = true;
    OrderWorkflow wf = harness.created(SETTINGS);
    assertEquals(OrderStatus.UNKNOWN, wf.pay().status());
    env.sleep(Duration.ofMinutes(2));
    wf.paymentNotification(new io.flashsale.domain.Notice(7, "ntf-7", "CHARGED", 1990, "txn-7"));
    waitFor(() -> backend.row().status() == OrderStatus.PAID);
    long asked = backend.count("converge");
    env.sleep(Duration.ofMinutes(5));
    assertEquals(asked, backend.count("converge"), "the round stopped once the order left UNKNOWN");
    List<HistoryEvent> h = harness.history();
    assertTrue(h.stream().anyMatch(e -> e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED),
        "the round's activity was cancelled");
    awaitEnd();
    harness.recordHistory("wf-notice-ends-the-convergence-round");
  }

  @Test
  void aCancelUpdateAcceptedWhileAWorkflowCancelSettlesTheOrderIsAnswered() throws Exception {
    harness.created(SETTINGS);
    backend.cancelGate = new java.util.concurrent.CountDownLatch(1);
    WorkflowStub run = harness.client.newUntypedWorkflowStub(OrderTestHarness.WF);
    run.cancel(); // the settle cancels the CREATED order: its step is held
    waitFor(() -> backend.count("cancel") == 1);
    io.temporal.client.WorkflowUpdateHandle<CommandResult> cancel = run.startUpdate(
        io.temporal.client.UpdateOptions.<CommandResult>newBuilder().setUpdateName("cancel")
            .setResultClass(CommandResult.class)
            .setWaitForStage(io.temporal.client.WorkflowUpdateStage.ACCEPTED).build());
    backend.cancelGate.countDown();
    CommandResult r = cancel.getResultAsync().get(20, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(OrderStatus.CANCELLED, r.status(), "answered, not abandoned: " + r);
    assertTrue(r.outcome() == CommandOutcome.CANCELLED || r.outcome() == CommandOutcome.REPLAY_CANCEL, r.toString());
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED, harness.executionStatus());
    harness.recordHistory("wf-cancel-update-answered-at-workflow-cancel");
  }

  @Test
  void aHandRaisedBeforeAContinueAsNewIsLoweredWhenTheOrderEnds() throws Exception {
    OrderSettings shortHistory = new OrderSettings(60_000, 1_000, 60_000, 600_000, 30, true)
        .withAttentionAfter(Duration.ofMinutes(5));
    backend.chargeAnswer = ChannelResult.UNKNOWN;
    backend.queryAnswer = ChannelResult.UNKNOWN;
    OrderWorkflow wf = harness.created(shortHistory);
    assertEquals(OrderStatus.UNKNOWN, wf.pay().status());
    env.sleep(Duration.ofMinutes(10));
    waitFor(() -> "UNKNOWN_AGED".equals(backend.attention));
    waitFor(() -> !harness.history().get(0).getWorkflowExecutionStartedEventAttributes()
        .getContinuedExecutionRunId().isEmpty());
    assertEquals("UNKNOWN_AGED", attention(), "the next run carries the raised hand");
    backend.queryAnswer = ChannelResult.CHARGED;
    env.sleep(Duration.ofMinutes(2));
    waitFor(() -> backend.row().status() == OrderStatus.PAID);
    waitFor(() -> attention() == null);
    assertNull(backend.attention, "the final transition cleared the row's mark");
    awaitEnd();
  }

  @Test
  void aNoticeThatComesWhileACancelledRunWaitsForItsHandlersIsApplied() throws Exception {
    backend.noticesApplyRules = true;
    OrderSettings taskSteps = new OrderSettings(60_000, 1_000, 60_000, 600_000, 4_000, false);
    harness.created(taskSteps);
    backend.cancelGate = new java.util.concurrent.CountDownLatch(1);
    WorkflowStub run = harness.client.newUntypedWorkflowStub(OrderTestHarness.WF);
    run.cancel();
    waitFor(() -> backend.count("cancel") == 1);
    io.temporal.client.WorkflowUpdateHandle<CommandResult> cancel = run.startUpdate(
        io.temporal.client.UpdateOptions.<CommandResult>newBuilder().setUpdateName("cancel")
            .setResultClass(CommandResult.class)
            .setWaitForStage(io.temporal.client.WorkflowUpdateStage.ACCEPTED).build());
    // a charge the channel made anyway (a late success): its notice comes while the run winds down
    harness.client.newWorkflowStub(OrderWorkflow.class, OrderTestHarness.WF)
        .paymentNotification(new io.flashsale.domain.Notice(5, "ntf-5", "CHARGED", 1990, "txn-5"));
    backend.cancelGate.countDown();
    cancel.getResultAsync().get(20, java.util.concurrent.TimeUnit.SECONDS);
    waitFor(() -> backend.row().status() == OrderStatus.REFUNDED);
    assertEquals(List.of(OrderStatus.CREATED, OrderStatus.CANCELLED, OrderStatus.REFUNDING, OrderStatus.REFUNDED),
        backend.path(), "the late charge was applied and refunded before the run ended");
  }

  @Test
  void aFirstQueryDelayLongerThanTheCapStillGivesAValidRound() {
    // 2 × the first delay (the round's first retry interval) above the cap: the cap gives way
    OrderSettings slowFirst = new OrderSettings(60_000, 90_000, 120_000, 600_000, 4_000, true);
    backend.chargeAnswer = ChannelResult.UNKNOWN;
    backend.nextQueryAnswers.add(ChannelResult.UNKNOWN);
    backend.queryAnswer = ChannelResult.CHARGED;
    OrderWorkflow wf = harness.created(slowFirst);
    assertEquals(OrderStatus.UNKNOWN, wf.pay().status());
    env.sleep(Duration.ofMinutes(6));
    waitFor(() -> backend.row().status() == OrderStatus.PAID);
    assertEquals(0, harness.events(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED), "no workflow task failed");
  }
}
