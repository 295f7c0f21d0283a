package io.flashsale.workflows;

import static io.flashsale.domain.OrderStatus.CANCELLED;
import static io.flashsale.domain.OrderStatus.CREATED;
import static io.flashsale.domain.OrderStatus.FAILED;
import static io.flashsale.domain.OrderStatus.PAID;
import static io.flashsale.domain.OrderStatus.PAYING;
import static io.flashsale.domain.OrderStatus.REFUNDED;
import static io.flashsale.domain.OrderStatus.REFUNDING;
import static io.flashsale.domain.OrderStatus.UNKNOWN;
import static io.flashsale.workflows.OrderTestHarness.WF;
import static io.flashsale.workflows.OrderTestHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Transition;
import io.flashsale.paymentchannel.ChannelResult;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.client.WorkflowUpdateException;
import io.temporal.client.WorkflowUpdateHandle;
import io.temporal.client.WorkflowUpdateStage;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every transition of the order state machine as the workflow drives it (docs/DESIGN.md §State
 * machine, §Workflow design), one rule per test. The backend applies notices by the real payment
 * rules and records every committed transition, so each test asserts the path the order took.
 * Waiting is done by skipping time: a run's end is awaited, which lets the test server jump
 * over reservation TTLs, query backoffs, refund retries and late-notice windows. Each test gets a
 * fresh engine from the SDK's {@link TestWorkflowExtension}.
 */
class OrderStateMachineTest {
  private static final long TTL_MS = 60_000;
  private static final long FIRST_QUERY_MS = 1_000;
  private static final long QUERY_CAP_MS = 5_000;
  private static final long LATE_NOTICE_WINDOW_MS = 600_000;
  private static final OrderSettings SETTINGS =
      new OrderSettings(TTL_MS, FIRST_QUERY_MS, QUERY_CAP_MS, LATE_NOTICE_WINDOW_MS, 4_000);
  /** Slack for a measured wait: the activities and workflow tasks around a timer take a little real time. */
  private static final long SLACK_MS = 1_000;
  private static final long RUN_END_LIMIT_S = 20;

  private final FakeOrderBackend backend = new FakeOrderBackend();
  @RegisterExtension final TestWorkflowExtension engine = OrderTestHarness.extension(backend);
  private OrderTestHarness harness;

  @BeforeEach
  void setUp(TestWorkflowEnvironment env, Worker worker) {
    harness = new OrderTestHarness(env, worker, backend);
    backend.noticesApplyRules = true;
  }

  // ---- create and pay ----

  @Test
  void createMakesACreatedOrder() {
    OrderWorkflow wf = created();
    assertPath(CREATED);
    OrderView seen = wf.status().order();
    assertEquals(CREATED, seen.status());
    assertEquals(1, seen.version());
  }

  @Test
  void payCommitsPayingBeforeTheChannelIsCalled() {
    backend.chargeGate = new CountDownLatch(1);
    OrderWorkflow wf = created();
    WorkflowUpdateHandle<CommandResult> pay = startPay();
    waitFor(() -> backend.count("charge") == 1);
    assertEquals(PAYING, backend.row().status(), "PAYING is committed while the charge is in flight");
    assertEquals(PAYING, wf.status().order().status());
    backend.chargeGate.countDown();
    assertEquals(PAID, pay.getResultAsync().join().status());
    assertPath(CREATED, PAYING, PAID);
  }

  @ParameterizedTest(name = "charge answered {0}: {1}")
  @CsvSource({"CHARGED, PAID", "DECLINED, FAILED", "CLOSED, FAILED", "UNKNOWN, UNKNOWN", "NOT_FOUND, UNKNOWN"})
  void theChargeAnswerDecidesWhereThePayEnds(ChannelResult answer, OrderStatus expected) {
    backend.chargeAnswer = answer;
    OrderWorkflow wf = created();
    assertEquals(expected, wf.pay().status());
    assertPath(CREATED, PAYING, expected);
    assertEquals(1, backend.count("charge"));
  }

  @Test
  void aFailedChargeActivityIsNoAnswerNeverAFailure() {
    backend.chargeFails = true;
    OrderWorkflow wf = created();
    assertEquals(UNKNOWN, wf.pay().status(), "the worker may have died after the channel charged");
    assertPath(CREATED, PAYING, UNKNOWN);
  }

  @Test
  void aChargeWhoseUnitWasLostMeanwhileIsRefunded() {
    backend.stockLost = true;
    OrderWorkflow wf = created();
    assertEquals(REFUNDING, wf.pay().status());
    awaitRunEnd();
    assertPath(CREATED, PAYING, REFUNDING, REFUNDED);
    assertEquals(1, backend.count("refund"));
    assertEquals(1, backend.count("completeRefund"));
  }

  // ---- UNKNOWN converges with the channel ----

  @ParameterizedTest(name = "query {0}, close {1}: {2} by {3}")
  @CsvSource({
      "CHARGED,   , PAID,   query",
      "DECLINED,  , FAILED, query",
      "NOT_FOUND, CLOSED,  FAILED, close",
      "NOT_FOUND, CHARGED, PAID,   close"})
  void anUnknownOrderConvergesByQueryAndNotFoundIsClosedFirst(ChannelResult query, ChannelResult close,
      OrderStatus expected, String decidedBy) {
    unknownOrder();
    backend.queryAnswer = query;
    if (close != null) backend.closeAnswer = close;
    awaitRunEnd();
    assertPath(CREATED, PAYING, UNKNOWN, expected);
    assertEquals(decidedBy, causeOf(expected));
    assertEquals(1, backend.count("query"));
    // rule 3: NOT_FOUND is not "not charged"; only the close's answer decides
    assertEquals(query == ChannelResult.NOT_FOUND ? 1 : 0, backend.count("close"));
  }

  @Test
  void unknownQueriesStartAfterTheFirstDelayAndDoubleUpToTheCap() {
    for (int i = 0; i < 5; i++) backend.nextQueryAnswers.add(ChannelResult.UNKNOWN);
    unknownOrder();
    backend.queryAnswer = ChannelResult.CHARGED;
    awaitRunEnd();
    assertPath(CREATED, PAYING, UNKNOWN, PAID);
    long unknownAt = backend.scheduledTimes("applyChannelAnswer UNKNOWN").get(0);
    List<Long> queries = backend.scheduledTimes("query");
    // 1 s, then doubling (2 s, 4 s) until the 5 s cap
    List<Long> expectedGaps = List.of(1_000L, 2_000L, 4_000L, 5_000L, 5_000L, 5_000L);
    assertEquals(expectedGaps.size(), queries.size(), "queries: " + queries);
    long previous = unknownAt;
    for (int i = 0; i < queries.size(); i++) {
      assertWaited(expectedGaps.get(i), queries.get(i) - previous, "before query " + (i + 1));
      previous = queries.get(i);
    }
  }

  @Test
  void anUnknownOrderOutlivesItsReservationExpiryAndStillConverges() {
    OrderSettings shortTtl = new OrderSettings(10_000, FIRST_QUERY_MS, QUERY_CAP_MS, LATE_NOTICE_WINDOW_MS, 4_000);
    // queries at about 1, 3, 7, 12 and 17 s: the reservation expires between the fourth and fifth
    for (int i = 0; i < 4; i++) backend.nextQueryAnswers.add(ChannelResult.UNKNOWN);
    unknownOrder(shortTtl);
    backend.queryAnswer = ChannelResult.CHARGED;
    awaitRunEnd();
    assertEquals(1, backend.count("expireReservation"));
    assertWaited(10_000, expiredAt() - createdAt(), "before the expiry");
    assertPath(CREATED, PAYING, UNKNOWN, PAID); // the expiry released the unit but left the order UNKNOWN
    assertEquals(5, backend.count("query"), "queries go on after the expiry");
  }

  @ParameterizedTest(name = "{0} notice: {1}")
  @CsvSource({"CHARGED, PAID", "DECLINED, FAILED"})
  void aNoticeSettlesAnUnknownOrder(String kind, OrderStatus expected) {
    OrderWorkflow wf = unknownOrder();
    notice(wf, 1, kind);
    awaitRunEnd();
    assertPath(CREATED, PAYING, UNKNOWN, expected);
    assertTrue(causeOf(expected).startsWith("callback ntf-1"), causeOf(expected));
  }

  @Test
  void aRunThatFindsItsOrderPayingMakesItUnknownAndConvergesIt() {
    backend.chargeGate = new CountDownLatch(1);
    created();
    startPay();
    waitFor(() -> backend.count("charge") == 1);
    // the run that made the charge is lost with its answer; a repair starts a run for the order
    harness.client.newUntypedWorkflowStub(WF).terminate("worker lost");
    backend.chargeGate.countDown();
    harness.startRun(new OrderStart("t1", "user-1", "k1", "ord-0001", SETTINGS));
    // the test server never releases its clock lock for an activity whose run was terminated, so
    // time does not skip from here: the first query comes after FIRST_QUERY_MS of real time
    waitFor(() -> backend.row().status() == PAID);
    assertPath(CREATED, PAYING, UNKNOWN, PAID);
    assertEquals("repair: charge answer lost", causeOf(UNKNOWN));
    assertEquals("query", causeOf(PAID));
    assertEquals(1, backend.count("charge"), "converged by query, never charged again");
  }

  /** The order is left PAYING by a run that is gone, its charge answered (CHARGED) into nothing. */
  private void orphanPayingOrder() {
    backend.chargeGate = new CountDownLatch(1);
    created();
    startPay();
    waitFor(() -> backend.count("charge") == 1);
    harness.client.newUntypedWorkflowStub(WF).terminate("worker lost");
    backend.chargeGate.countDown();
    waitFor(() -> backend.row().status() == PAYING);
  }

  @Test
  void aLateNoticeRunThatFindsItsOrderPayingMakesItUnknownAndConvergesItByQuery() {
    orphanPayingOrder();
    // signal-with-start (Orders.notify): a notice for the order, which the rules ignore (a DECLINED
    // for another charge attempt would be applied; this one only wakes the run)
    OrderWorkflow wf = harness.client.newWorkflowStub(OrderWorkflow.class,
        harness.runOptions().build());
    io.temporal.client.BatchRequest batch = harness.client.newSignalWithStartRequest();
    batch.add(wf::run, new OrderStart("t1", "user-1", "k1", "ord-0001", SETTINGS));
    batch.add(wf::paymentNotification, new Notice(1, "ntf-1", "REFUNDED", 1990, "txn-1"));
    harness.client.signalWithStart(batch);
    waitFor(() -> backend.row().status() == PAID);
    assertPath(CREATED, PAYING, UNKNOWN, PAID);
    assertEquals("query", causeOf(PAID));
    assertEquals(1, backend.count("charge"), "converged by query, never charged again");
    assertEquals(0, harness.events(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED));
  }

  @Test
  void aContinuedRunThatFindsItsOrderPayingMakesItUnknownAndConvergesItByQuery() {
    // continue-as-new waits for every handler, so a pay in flight is never carried; what can be
    // carried is a PAYING row whose answer is gone, and the new run treats it as any adopter does
    orphanPayingOrder();
    harness.startRun(new OrderStart("t1", "user-1", "k1", "ord-0001", SETTINGS, -1L, List.of(),
        List.of("-> CREATED", "CREATED -> PAYING")));
    waitFor(() -> backend.row().status() == PAID);
    assertPath(CREATED, PAYING, UNKNOWN, PAID);
    assertEquals("query", causeOf(PAID));
    assertEquals(1, backend.count("charge"), "converged by query, never charged again");
    assertEquals(0, harness.events(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED));
  }

  // ---- cancel ----

  @Test
  void aCancelOfACreatedOrderCancelsIt() {
    OrderWorkflow wf = created();
    assertEquals(new CommandResult(CommandOutcome.CANCELLED, CANCELLED, 2), wf.cancel());
    awaitRunEnd();
    assertPath(CREATED, CANCELLED);
    assertEquals(0, backend.count("expireReservation"), "a cancelled order's reservation is not expired again");
  }

  @Test
  void aPayAfterACancelFindsTheRunClosedAndChargesNothing() {
    OrderWorkflow wf = created();
    wf.cancel();
    awaitRunEnd();
    // the API answers a command on a closed run from the row: 409 REJECTED here
    assertThrows(io.temporal.client.WorkflowNotFoundException.class, wf::pay);
    assertEquals(0, backend.count("beginPay"));
    assertEquals(0, backend.count("charge"));
    assertPath(CREATED, CANCELLED);
  }

  @Test
  void aCancelAfterAPayIsRejectedWhileTheChargeIsInFlightAndAfter() {
    backend.chargeGate = new CountDownLatch(1);
    OrderWorkflow wf = created();
    WorkflowUpdateHandle<CommandResult> pay = startPay();
    waitFor(() -> backend.count("charge") == 1);
    assertEquals(new CommandResult(CommandOutcome.REJECTED, PAYING, 2), refusal(wf::cancel));
    backend.chargeGate.countDown();
    pay.getResultAsync().join();
    // PAID ends the run: the API answers a later cancel from the row (409 REJECTED)
    awaitRunEnd();
    assertThrows(io.temporal.client.WorkflowNotFoundException.class, wf::cancel);
    assertEquals(0, backend.count("cancel"));
    assertPath(CREATED, PAYING, PAID);
  }

  // ---- reservation expiry ----

  @Test
  void aCreatedOrderWhoseReservationExpiresIsCancelledOnce() {
    created();
    awaitRunEnd();
    assertEquals(1, backend.count("expireReservation"));
    assertWaited(TTL_MS, expiredAt() - createdAt(), "before the expiry");
    assertPath(CREATED, CANCELLED);
    assertEquals("reservation expired", causeOf(CANCELLED));
    // it never reached the channel: no late-notice window, the run ends with the expiry's task
    long endedAt = eventTime(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    assertTrue(endedAt - expiredAt() < SLACK_MS, "ended " + (endedAt - expiredAt()) + " ms after the expiry");
    assertEquals(0, lateNoticeTimers(), "no late-notice window");
  }

  // ---- notices ----

  @Test
  void aChargedNoticeForACreatedOrderPaysItAndAPayIsThenRejected() {
    OrderWorkflow wf = created();
    notice(wf, 1, "CHARGED");
    waitFor(() -> backend.row().status() == PAID);
    // PAID ends the run: the API answers a later pay from the row (409 REJECTED)
    awaitRunEnd();
    assertThrows(io.temporal.client.WorkflowNotFoundException.class, wf::pay);
    assertEquals(0, backend.count("charge"), "the buyer already paid");
    assertPath(CREATED, PAID);
  }

  @Test
  void aLateChargeForAFailedOrderIsRefunded() {
    backend.chargeAnswer = ChannelResult.DECLINED;
    OrderWorkflow wf = created();
    assertEquals(FAILED, wf.pay().status());
    assertLateChargeIsRefunded(wf, CREATED, PAYING, FAILED);
  }

  @Test
  void aCancelledOrderThatNeverReachedTheChannelEndsAtOnceAndALateChargeStillGetsRefunded() {
    OrderWorkflow wf = created();
    String firstRun = WorkflowStub.fromTyped(wf).getExecution().getRunId();
    wf.cancel();
    awaitRunEnd();
    assertEquals(0, lateNoticeTimers(), "no late-notice window");
    long cancelledAt = eventTime(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
    long endedAt = eventTime(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    assertTrue(endedAt - cancelledAt < SLACK_MS, "ended " + (endedAt - cancelledAt) + " ms after the cancel, no window");
    // a charge nobody asked for still comes to the order, by signal-with-start: a new run refunds it
    harness.orders(SETTINGS).notify(WF, "t1", "user-1", "k1", backend.row().orderId(),
        new Notice(1, "ntf-1", "CHARGED", 1990, "txn-1"));
    awaitRunEnd();
    assertNotEquals(firstRun, harness.describe().getExecution().getRunId(), "the late charge came to a new run");
    assertEquals(List.of(CREATED, CANCELLED, REFUNDING, REFUNDED), backend.path());
    assertEquals(1, backend.count("refund"), "refunded once");
  }

  @Test
  void aPaidOrderEndsItsRunAtOnceAndADuplicateChargeLaterChangesNothing() {
    OrderWorkflow wf = created();
    String firstRun = WorkflowStub.fromTyped(wf).getExecution().getRunId();
    assertEquals(PAID, wf.pay().status());
    awaitRunEnd();
    assertEquals(0, lateNoticeTimers(), "no late-notice window");
    long paidAt = eventTime(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
    long endedAt = eventTime(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    assertTrue(endedAt - paidAt < SLACK_MS, "ended " + (endedAt - paidAt) + " ms after PAID, no window");
    // the API answers a copy of the charge from the row; one that reaches the engine anyway comes
    // by signal-with-start to a new run, which applies it as a duplicate and ends
    harness.orders(SETTINGS).notify(WF, "t1", "user-1", "k1", backend.row().orderId(),
        new Notice(1, "ntf-1", "CHARGED", 1990, "txn-1"));
    awaitRunEnd();
    assertNotEquals(firstRun, harness.describe().getExecution().getRunId(), "the copy came to a new run");
    assertPath(CREATED, PAYING, PAID);
    assertEquals(1, backend.count("applyNotice"), "the copy was applied once, as a duplicate");
    assertEquals(0, backend.count("refund"));
  }

  @Test
  void aRefundedNoticeSettlesARefundingOrderWhoseRefundRoundFailed() {
    backend.stockLost = true;
    backend.refundFailures.set(Integer.MAX_VALUE); // the channel never answers the refund itself
    OrderWorkflow wf = created();
    assertEquals(REFUNDING, wf.pay().status());
    notice(wf, 1, "REFUNDED"); // applied while the round runs: the round stops
    awaitRunEnd();
    assertPath(CREATED, PAYING, REFUNDING, REFUNDED);
    assertEquals("callback ntf-1", causeOf(REFUNDED));
    long attempts = backend.count("refund");
    System.out.println("refund attempts before the REFUNDED notice settled the order: " + attempts);
    assertTrue(attempts >= 1, "the round ran");
    assertEquals(0, backend.count("completeRefund"));
  }

  @Test
  void aFinalOrderEndsItsRunOneLateNoticeWindowAfterItsLastStatusChange() {
    backend.chargeAnswer = ChannelResult.DECLINED; // a FAILED order the channel saw keeps the window
    OrderWorkflow wf = created();
    assertEquals(FAILED, wf.pay().status());
    Duration almostAWindow = Duration.ofMillis(LATE_NOTICE_WINDOW_MS).minusMinutes(1);
    harness.env.sleep(almostAWindow);
    assertRunning();
    long timers = harness.events(EventType.EVENT_TYPE_TIMER_STARTED);
    notice(wf, 1, "DECLINED"); // a duplicate: it changes nothing, so the window keeps its deadline
    waitFor(() -> backend.count("applyNotice") == 1);
    awaitRunEnd();
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, harness.executionStatus());
    long endedAt = eventTime(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    assertWaited(LATE_NOTICE_WINDOW_MS, endedAt - paidTaskStartedAt(), "from FAILED to the end of the run");
    assertEquals(timers, harness.events(EventType.EVENT_TYPE_TIMER_STARTED), "the notice kept the window's timer");
  }

  // ---- continue-as-new ----

  @Test
  void noticesAcrossContinueAsNewAreEachAppliedOnce() {
    int notices = 40;
    OrderSettings shortHistory = new OrderSettings(TTL_MS, FIRST_QUERY_MS, QUERY_CAP_MS, LATE_NOTICE_WINDOW_MS, 40);
    OrderWorkflow wf = unknownOrder(shortHistory);
    String firstRun = WorkflowStub.fromTyped(wf).getExecution().getRunId();
    // a burst: the first decline fails the order, its duplicates change nothing, the late charge is refunded
    OrderWorkflow latest = harness.client.newWorkflowStub(OrderWorkflow.class, WF);
    for (int n = 1; n < notices; n++) notice(latest, n, "DECLINED");
    notice(latest, notices, "CHARGED");
    awaitRunEnd();
    Map<String, Long> appliedPerNotice = backend.calls.stream()
        .map(FakeOrderBackend.Call::name)
        .filter(c -> c.startsWith("applyNotice "))
        .collect(Collectors.groupingBy(c -> c.substring(c.lastIndexOf(' ') + 1), Collectors.counting()));
    List<String> notAppliedOnce = IntStream.rangeClosed(1, notices).mapToObj(n -> "ntf-" + n)
        .filter(id -> appliedPerNotice.getOrDefault(id, 0L) != 1).toList();
    assertEquals(List.of(), notAppliedOnce, "notices not applied exactly once: " + appliedPerNotice);
    assertPath(CREATED, PAYING, UNKNOWN, FAILED, REFUNDING, REFUNDED);
    assertEquals(1, backend.count("refund"));
    assertTrue(runsFrom(firstRun) >= 3, "the history was cut more than once: " + runsFrom(firstRun) + " runs");
  }

  // ---- helpers ----

  private OrderWorkflow created() {
    return harness.created(SETTINGS);
  }

  private OrderWorkflow unknownOrder() {
    return unknownOrder(SETTINGS);
  }

  /** An order whose charge got no answer; queries keep answering UNKNOWN until a test says otherwise. */
  private OrderWorkflow unknownOrder(OrderSettings settings) {
    backend.chargeAnswer = ChannelResult.UNKNOWN;
    backend.queryAnswer = ChannelResult.UNKNOWN;
    OrderWorkflow wf = harness.created(settings);
    assertEquals(UNKNOWN, wf.pay().status());
    return wf;
  }

  /** A pay that is running: accepted, not answered yet. */
  private WorkflowUpdateHandle<CommandResult> startPay() {
    return harness.client.newUntypedWorkflowStub(WF).startUpdate(UpdateOptions.<CommandResult>newBuilder()
        .setUpdateName("pay").setResultClass(CommandResult.class)
        .setWaitForStage(WorkflowUpdateStage.ACCEPTED).build());
  }

  /** A callback the API recorded (arrival id n) for the order's amount. */
  private static void notice(OrderWorkflow wf, int n, String kind) {
    wf.paymentNotification(new Notice(n, "ntf-" + n, kind, 1990, "txn-" + n));
  }

  /**
   * Waits for the latest run (and any it continued as) to end, skipping time meanwhile. Bounded in
   * wall-clock time: an order that never settles would otherwise skip time forever.
   */
  private void awaitRunEnd() {
    try {
      harness.client.newUntypedWorkflowStub(WF).getResult(RUN_END_LIMIT_S, TimeUnit.SECONDS, Void.class);
    } catch (TimeoutException e) {
      throw new AssertionError("the run did not end within " + RUN_END_LIMIT_S + " s", e);
    }
  }

  /** The answer a validator refused a command with. */
  private static CommandResult refusal(Executable command) {
    return CommandResult.refusedBy(assertThrows(WorkflowUpdateException.class, command));
  }

  private void assertLateChargeIsRefunded(OrderWorkflow wf, OrderStatus... pathToFinal) {
    harness.env.sleep(Duration.ofMillis(LATE_NOTICE_WINDOW_MS).minusMinutes(1)); // late, yet within the window
    notice(wf, 1, "CHARGED");
    awaitRunEnd();
    List<OrderStatus> expected = new ArrayList<>(List.of(pathToFinal));
    expected.addAll(List.of(REFUNDING, REFUNDED));
    assertEquals(expected, backend.path());
    assertEquals(1, backend.count("refund"), "refunded once");
    assertEquals(1, backend.count("completeRefund"));
  }

  private void assertPath(OrderStatus... statuses) {
    assertEquals(List.of(statuses), backend.path());
  }

  private void assertRunning() {
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING, harness.executionStatus());
  }

  /** A timed wait took its time, not less, and not much more. */
  private static void assertWaited(long expectedMs, long actualMs, String what) {
    assertTrue(actualMs >= expectedMs && actualMs < expectedMs + SLACK_MS,
        what + ": waited " + actualMs + " ms, expected " + expectedMs + " ms");
  }

  /** Why the order moved into this status (the transition's cause). */
  private String causeOf(OrderStatus to) {
    return backend.committed.stream().filter(t -> t.to() == to).map(Transition::cause).findFirst()
        .orElseThrow(() -> new AssertionError("never " + to + ": " + backend.path()));
  }

  /**
   * The workflow's own clock at the create: the start of the workflow task that ran the reserve.
   * The deadline is counted from there, and a local reserve runs a little later inside that task
   * (on a loaded machine, tens of ms), so its own time would make the wait look short.
   */
  private long createdAt() {
    List<HistoryEvent> events = harness.client.fetchHistory(WF).getHistory().getEventsList();
    long reserveAt = backend.scheduledTimes("reserve").get(0);
    long taskStartedAt = -1;
    for (HistoryEvent e : events) {
      long at = e.getEventTime().getSeconds() * 1_000 + e.getEventTime().getNanos() / 1_000_000;
      if (at > reserveAt) break;
      if (e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) taskStartedAt = at;
    }
    return taskStartedAt >= 0 ? taskStartedAt : reserveAt;
  }

  private long expiredAt() {
    return backend.scheduledTimes("expireReservation").get(0);
  }

  /** The workflow clock of the task that saw PAID: the start of the task that completed the pay. */
  private long paidTaskStartedAt() {
    List<HistoryEvent> events = harness.history();
    HistoryEvent started = null;
    HistoryEvent payTask = null;
    for (HistoryEvent e : events) {
      if (e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) started = e;
      if (e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED) payTask = started;
    }
    if (payTask == null) throw new AssertionError("no completed update");
    return payTask.getEventTime().getSeconds() * 1_000 + payTask.getEventTime().getNanos() / 1_000_000;
  }

  /** When the latest run last recorded an event of this type (test server clock, ms). */
  private long eventTime(EventType type) {
    HistoryEvent last = harness.history().stream().filter(e -> e.getEventType() == type)
        .reduce((a, b) -> b).orElseThrow(() -> new AssertionError("no " + type));
    return last.getEventTime().getSeconds() * 1_000 + last.getEventTime().getNanos() / 1_000_000;
  }

  /** Timers of the latest run that wait out the late-notice window. */
  private long lateNoticeTimers() {
    return harness.history().stream().filter(e -> e.getEventType() == EventType.EVENT_TYPE_TIMER_STARTED)
        .filter(e -> e.getTimerStartedEventAttributes().getStartToFireTimeout().getSeconds() * 1_000
            == LATE_NOTICE_WINDOW_MS)
        .count();
  }

  /** How many runs the order's workflow had, following continue-as-new from the first. */
  private int runsFrom(String runId) {
    int runs = 1;
    HistoryEvent last = harness.client.fetchHistory(WF, runId).getLastEvent();
    while (last.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW) {
      runs++;
      String next = last.getWorkflowExecutionContinuedAsNewEventAttributes().getNewExecutionRunId();
      last = harness.client.fetchHistory(WF, next).getLastEvent();
    }
    return runs;
  }
}
