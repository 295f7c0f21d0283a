package io.flashsale.workflows;

import static io.flashsale.workflows.OrderTestHarness.WF;
import static io.flashsale.workflows.OrderTestHarness.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderStatus;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The order workflow on an engine whose worker is built otherwise than {@link OrderWorkflowTest}'s:
 * each {@code @Nested} class registers the SDK's {@link TestWorkflowExtension} with its own worker
 * ({@link OrderTestHarness#extension(FakeOrderBackend, boolean, boolean)}). They are not nested in
 * {@link OrderWorkflowTest} because an enclosing class's extension applies to its nested classes as
 * well: each test would get two engines, and two resolvers for the same parameters.
 */
class OrderWorkflowWorkerVariantsTest {
  private static final OrderSettings SETTINGS = OrderWorkflowTest.SETTINGS;

  /** No activity worker: the worker runs workflows and local database steps, so the charge's task is never taken. */
  @Nested
  class WithoutActivityWorker {
    private final FakeOrderBackend backend = new FakeOrderBackend();
    @RegisterExtension final TestWorkflowExtension engine = OrderTestHarness.extension(backend, false, true);
    private OrderTestHarness harness;

    @BeforeEach
    void setUp(TestWorkflowEnvironment env, Worker worker) {
      harness = new OrderTestHarness(env, worker, backend);
    }

    @Test
    void aChargeNoWorkerStartsIsNotChargedTheOrderFailsAndALaterChargeIsRefunded() throws Exception {
      backend.noticesApplyRules = true;
      OrderWorkflow wf = harness.created(SETTINGS);
      java.util.concurrent.CompletableFuture<CommandResult> pay = java.util.concurrent.CompletableFuture.supplyAsync(wf::pay);
      waitFor(() -> harness.events(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) == 1); // the charge's task
      harness.env.sleep(ChannelSteps.CHARGE_START_BOUND.plusSeconds(1));
      CommandResult r = pay.get(20, TimeUnit.SECONDS);
      assertEquals(OrderStatus.FAILED, r.status(), "never started: definitely not charged");
      assertEquals(0, backend.count("charge"));
      assertEquals(List.of(OrderStatus.CREATED, OrderStatus.PAYING, OrderStatus.FAILED), backend.path());
      assertEquals("charge never started", backend.committed.get(2).cause());
      // should the channel charge anyway (it cannot: no request left), rule 5 still holds
      wf.paymentNotification(new Notice(3, "ntf-3", "CHARGED", 1990, "txn-3"));
      waitFor(() -> backend.row().status() == OrderStatus.REFUNDING);
      assertEquals(0, harness.events(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED));
      harness.recordHistory("wf-charge-start-bound-failed-late-charge-refunded");
    }
  }

  /** The worker polls only once the test says so: whatever the client sent first reaches the run in one first workflow task. */
  @Nested
  class PollingAfterTheClientSent {
    private final FakeOrderBackend backend = new FakeOrderBackend();
    @RegisterExtension final TestWorkflowExtension engine = OrderTestHarness.extension(backend, true, false);
    private OrderTestHarness harness;

    @BeforeEach
    void setUp(TestWorkflowEnvironment env, Worker worker) {
      harness = new OrderTestHarness(env, worker, backend);
    }

    @Test
    void aPayInTheSameTaskAsItsCreateWaitsForIt() throws Exception {
      // a worker died in the create's task after the reserve committed; the buyer's retried create
      // was answered from the row (200 REPLAY) and its pay came: the next worker gets the create and
      // the pay in one workflow task, the pay's validator running before the create has an order
      CommandResult r = createAndThenInOneTask(orders -> orders.pay(WF, "pay-1"));
      assertNull(r.outcome(), "the pay ran once the create settled: " + r);
      assertEquals(OrderStatus.PAID, r.status());
      assertEquals(0, harness.events(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED));
      harness.recordHistory("wf-pay-in-the-create-task");
    }

    @Test
    void aCancelInTheSameTaskAsItsCreateWaitsForIt() throws Exception {
      CommandResult r = createAndThenInOneTask(orders -> orders.cancel(WF, "cancel-1"));
      assertEquals(CommandOutcome.CANCELLED, r.outcome(), "the cancel ran once the create settled: " + r);
      assertEquals(OrderStatus.CANCELLED, backend.row().status());
    }

    /** A create's deadline the test waits out at once; a buyer's first try with key k1. */
    private static final java.time.Duration CREATE_DEADLINE = java.time.Duration.ofMillis(300);
    private static final CreateOrder FIRST_TRY = new CreateOrder("t1", "user-1", "k1", "sku-1", 1, null);

    @Test
    void aRetryOfAKeyWhoseCreateIsStillInTheEngineJoinsItsCall() throws Exception {
      // a crowd's buyer answered 503 at the create deadline sends the key again while the engine
      // still has the first call: the retry joins it (the API answers it REPLAY), one update in the run
      Orders orders = harness.orders(SETTINGS, java.time.Duration.ofSeconds(10), CREATE_DEADLINE);
      CreateOrder req = FIRST_TRY;
      Orders.CreateCall first = orders.startCreate(req);
      assertTrue(first.started());
      assertThrows(Orders.DeadlineExceeded.class, () -> orders.await(first), "no worker polls yet: 503 at the deadline");
      assertFalse(first.answer().isDone(), "the engine call goes on past the deadline");
      Orders.CreateCall retry = orders.createInFlight(req);
      assertNotNull(retry, "the key's call is in flight here");
      assertFalse(retry.started(), "the retry joins it");
      assertFalse(orders.startCreate(req).started(), "a create racing it joins it too, with no call of its own");
      assertNull(orders.createInFlight(new CreateOrder("t1", "user-1", "k1", "sku-1", 2, null)),
          "another payload under the key does not join it");
      harness.startPolling();
      CreateResult joined = retry.answer().get(20, TimeUnit.SECONDS);
      assertEquals(CreateOutcome.CREATED, joined.outcome(), "the first call's answer: " + joined);
      assertEquals(1, harness.events(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED), "one update in the run");
      waitFor(() -> orders.createInFlight(req) == null);
      Orders.CreateCall next = orders.startCreate(req);
      assertTrue(next.started(), "once the call ended, the key's next create is a call of its own");
      assertEquals(CreateOutcome.REPLAY, next.answer().get(20, TimeUnit.SECONDS).outcome(), "which the run answers REPLAY");
      assertEquals(2, harness.events(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED));
      harness.recordHistory("wf-create-joined-retry");
    }

    @Test
    void aCreateTheEngineDoesNotEndIsGivenUpAtTheCommandsDeadline() throws Exception {
      // no worker polls: the call would never end; at the commands' deadline (1 s here) it is given up,
      // so the place it holds comes back and the key's next create is a call of its own
      Orders orders = harness.orders(SETTINGS, java.time.Duration.ofSeconds(1), CREATE_DEADLINE);
      CreateOrder req = FIRST_TRY;
      Orders.CreateCall call = orders.startCreate(req);
      assertThrows(Orders.DeadlineExceeded.class, () -> orders.await(call));
      waitFor(() -> call.answer().isDone());
      assertTrue(call.answer().isCompletedExceptionally(), "given up, not answered");
      assertThrows(Orders.DeadlineExceeded.class, () -> orders.await(call), "a late reader is told the deadline passed");
      assertNull(orders.createInFlight(req), "no longer in flight here");
    }

    /**
     * A run's create and then a command, both sent before any worker polls, so they reach the run in
     * its first workflow task; the command as the API sends it (a validator's refusal is an answer).
     */
    private CommandResult createAndThenInOneTask(java.util.function.Function<Orders, CommandResult> command)
        throws Exception {
      OrderWorkflow wf = harness.startRun(SETTINGS);
      java.util.concurrent.CompletableFuture<CreateResult> create = java.util.concurrent.CompletableFuture.supplyAsync(
          () -> wf.create(new CreateOrder("t1", "user-1", "k1", "sku-1", 1, null)));
      Thread.sleep(500); // the create is admitted first
      java.util.concurrent.CompletableFuture<CommandResult> answer = java.util.concurrent.CompletableFuture.supplyAsync(
          () -> command.apply(harness.orders(SETTINGS)));
      Thread.sleep(500);
      harness.startPolling();
      assertEquals(CreateOutcome.CREATED, create.get(20, TimeUnit.SECONDS).outcome());
      CommandResult r = answer.get(20, TimeUnit.SECONDS);
      // the precondition: both updates were accepted by the run's first task, no task between them
      List<EventType> types = harness.history().stream().map(HistoryEvent::getEventType).toList();
      int firstAccepted = types.indexOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
      int secondAccepted = types.subList(firstAccepted + 1, types.size()).indexOf(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
          + firstAccepted + 1;
      assertTrue(secondAccepted > firstAccepted, "two updates accepted: " + types);
      assertEquals(1, types.subList(0, secondAccepted).stream().filter(t -> t == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED).count(),
          "the create and the command came in the run's first workflow task: " + types);
      return r;
    }
  }

  /**
   * The channel on a queue of its own: the orders' worker takes no activity tasks at all (its
   * queue could be any backlog), a second worker polls only the channel's queue, and the charge
   * starts there. Without the channel's queue the charge would wait on the orders' queue past its
   * start bound and the pay would end FAILED.
   */
  @Nested
  class ChannelOnItsOwnQueue {
    private static final String CHANNEL_QUEUE = "flashsale-channel-test";
    private final FakeOrderBackend backend = new FakeOrderBackend();
    @RegisterExtension final TestWorkflowExtension engine = OrderTestHarness.extension(backend, false, false);
    private OrderTestHarness harness;

    @BeforeEach
    void setUp(TestWorkflowEnvironment env, Worker worker) {
      harness = new OrderTestHarness(env, worker, backend);
      env.newWorker(CHANNEL_QUEUE).registerActivitiesImplementations(backend.channel);
      harness.startPolling();
    }

    @Test
    void theChargeStartsOnTheChannelsQueueWhileTheOrdersQueueTakesNoActivity() throws Exception {
      OrderSettings settings = SETTINGS.withChannelTaskQueue(CHANNEL_QUEUE);
      OrderWorkflow wf = harness.created(settings);
      assertEquals(OrderStatus.PAID, wf.pay().status(), "charged through the channel's own queue");
      List<String> queues = harness.history().stream()
          .filter(e -> e.getEventType() == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
          .map(e -> e.getActivityTaskScheduledEventAttributes().getTaskQueue().getName()).toList();
      assertEquals(List.of(CHANNEL_QUEUE), queues, "the charge was scheduled on the channel's queue");
      assertEquals(1, backend.count("charge"));
      WorkflowStub.fromTyped(wf).getResult(Void.class);
      harness.recordHistory("wf-charge-on-the-channel-queue");
    }
  }
}
