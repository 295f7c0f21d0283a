package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderStatus;
import io.flashsale.paymentchannel.ChannelResult;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The history one order leaves on each path, run to its end (the late-notice window included) with
 * the default settings: the figures docs/DESIGN.md and evidence/bench/PERFORMANCE.md give. Each
 * history is written to target/histories as {@code path-<name>.json}; the recorded copies in
 * evidence/src/test/resources/histories are what the replay gate replays and X-23 counts. The
 * counts are printed; what is asserted is that the run ended on the path's final status.
 */
class EventsPerPathTest {
  private static final OrderSettings SETTINGS = OrderSettings.defaults();

  private final FakeOrderBackend backend = new FakeOrderBackend();
  @RegisterExtension final TestWorkflowExtension engine = OrderTestHarness.extension(backend);
  private OrderTestHarness harness;

  @BeforeEach
  void setUp(TestWorkflowEnvironment env, Worker worker) {
    harness = new OrderTestHarness(env, worker, backend);
    backend.noticesApplyRules = true;
  }

  private void runToItsEnd(String path, OrderStatus last) throws Exception {
    WorkflowStub.fromTyped(harness.client.newWorkflowStub(OrderWorkflow.class, OrderTestHarness.WF)).getResult(Void.class);
    assertEquals(last, backend.row().status());
    List<HistoryEvent> h = harness.history();
    assertEquals(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, h.get(h.size() - 1).getEventType(), "ran to its end");
    System.out.println("EVENTS path-" + path + " " + h.size() + " events, " + backend.path());
    harness.recordHistory("path-" + path);
  }

  @Test
  void paid() throws Exception {
    harness.created(SETTINGS).pay();
    runToItsEnd("paid", OrderStatus.PAID);
  }

  /**
   * The channel's notice arrives while the charge is in flight: it waits behind the pay, which
   * makes the order PAID, and is then applied as a duplicate. (A notice after the reply finds the
   * run ended and is answered from the row by the API: the engine never sees it.)
   */
  @Test
  void paidWithItsNoticeDuringTheCharge() throws Exception {
    backend.chargeGate = new java.util.concurrent.CountDownLatch(1);
    OrderWorkflow wf = harness.created(SETTINGS);
    harness.client.newUntypedWorkflowStub(OrderTestHarness.WF).startUpdate(
        io.temporal.client.UpdateOptions.<CommandResult>newBuilder().setUpdateName("pay")
            .setResultClass(CommandResult.class).setWaitForStage(io.temporal.client.WorkflowUpdateStage.ACCEPTED).build());
    OrderTestHarness.waitFor(() -> backend.count("charge") == 1);
    wf.paymentNotification(new Notice(1, "ntf-1", "CHARGED", 1990, "txn-1"));
    OrderTestHarness.waitFor(() -> harness.history().stream()
        .anyMatch(e -> e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED));
    backend.chargeGate.countDown();
    runToItsEnd("paid-notice-during-charge", OrderStatus.PAID);
    assertEquals(List.of(OrderStatus.CREATED, OrderStatus.PAYING, OrderStatus.PAID), backend.path());
    assertEquals(1, backend.count("applyNotice"), "the notice applied once, after the pay");
  }

  @Test
  void declined() throws Exception {
    backend.chargeAnswer = ChannelResult.DECLINED;
    harness.created(SETTINGS).pay();
    runToItsEnd("declined", OrderStatus.FAILED);
  }

  @Test
  void cancelledByTheBuyer() throws Exception {
    harness.created(SETTINGS).cancel();
    runToItsEnd("cancelled", OrderStatus.CANCELLED);
  }

  @Test
  void expired() throws Exception {
    harness.created(SETTINGS);
    runToItsEnd("expired", OrderStatus.CANCELLED);
  }

  @Test
  void unknownThenPaidByQuery() throws Exception {
    backend.chargeAnswer = ChannelResult.UNKNOWN;
    harness.created(SETTINGS).pay();
    runToItsEnd("unknown-query-paid", OrderStatus.PAID);
  }

  @Test
  void unknownThenClosedAndFailed() throws Exception {
    backend.chargeAnswer = ChannelResult.UNKNOWN;
    backend.queryAnswer = ChannelResult.NOT_FOUND;
    harness.created(SETTINGS).pay();
    runToItsEnd("unknown-close-failed", OrderStatus.FAILED);
  }

  @Test
  void chargedButSoldMeanwhileAndRefunded() throws Exception {
    backend.stockLost = true;
    harness.created(SETTINGS).pay();
    runToItsEnd("charged-refunded", OrderStatus.REFUNDED);
  }
}
