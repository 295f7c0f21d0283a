package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import io.flashsale.api.auth.Caller;
import io.flashsale.api.representations.CommandAnswer;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.persistence.MigratedPostgres;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.PayAnswers;
import io.flashsale.persistence.Skus;
import io.flashsale.workflows.FakeOrderBackend;
import io.flashsale.workflows.OrderSettings;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.flashsale.workflows.Orders;
import io.flashsale.workflows.WorkflowIds;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.mockito.MockMakers;

/**
 * A keyed pay retried once the order's run has closed, on the in-memory engine with the order's
 * real workflow (its database and channel in memory) and the pay answers on a real PostgreSQL: the
 * engine knows the update id only while the run is open, so the retry is answered from
 * {@code pay_answer} with the first answer's status and body. Another key, no key and another
 * principal keep today's answers. The engine is the SDK's {@link TestWorkflowExtension}, fresh for
 * each test.
 */
class PayAfterRunClosedTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String TENANT = "t1";
  private static final String SUBJECT = "user-1";
  private static final AtomicInteger NEXT = new AtomicInteger();
  /** A short late-notice window: the run of a PAID order closes soon after the pay (time skips anyway). */
  private static final OrderSettings SETTINGS = new OrderSettings(60_000, 1_000, 60_000, 5_000, 4_000);

  private final FakeOrderBackend backend = new FakeOrderBackend();
  /** A fresh in-memory engine per test: the order's workflow, its database and channel activities in memory. */
  @RegisterExtension final TestWorkflowExtension temporal = engineFor(backend);
  private final OrderQueries queries = mock(OrderQueries.class, withSettings().mockMaker(MockMakers.INLINE));
  private final Caller buyer = new Caller(TENANT, SUBJECT);
  private TestWorkflowEnvironment env;
  private Orders orders;
  private OrderResource resource;
  private String requestKey;
  private String workflowId;
  private String orderId;

  private static TestWorkflowExtension engineFor(FakeOrderBackend backend) {
    TestWorkflowExtension.Builder builder = TestWorkflowExtension.newBuilder()
        .registerWorkflowImplementationTypes(OrderWorkflowImpl.class)
        .setActivityImplementations(backend.db, backend.channel);
    for (String name : List.of("OrderId", "OrderStatus", "Sku", "Tenant", "OrderAttention")) {
      builder.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    return builder.build();
  }

  @BeforeEach
  void engine(TestWorkflowEnvironment env, Worker worker) {
    this.env = env;
    // every test's order is ord-0001 (the in-memory backend's): no answers of an earlier test
    pg.db().read(c -> {
      try (java.sql.Statement st = c.createStatement()) {
        return st.executeUpdate("DELETE FROM pay_answer");
      }
    });
    // the extension's worker polls a queue of its own: the orders' runs start there
    orders = new Orders(env.getWorkflowClient(), SETTINGS, java.time.Duration.ofSeconds(10), worker.getTaskQueue());
    // the row as the database would show it: the in-memory backend's order, read at each call
    requestKey = "k" + NEXT.incrementAndGet();
    workflowId = WorkflowIds.forScope(TENANT, SUBJECT, requestKey);
    when(queries.get(anyString())).thenAnswer(inv -> {
      OrderView row = backend.row();
      return row == null || !row.orderId().equals(inv.getArgument(0)) ? null : details(row);
    });
    resource = new OrderResource(orders, queries, mock(Skus.class, withSettings().mockMaker(MockMakers.INLINE)), null,
        null, CreateAdmission.fixed(4), 2, 1, new PayAnswers(pg.db()));
    assertEquals(CreateOutcome.CREATED, orders.create(new CreateOrder(TENANT, SUBJECT, requestKey, "sku-1", 1, null)).outcome());
    orderId = backend.row().orderId();
  }

  private OrderDetails details(OrderView row) {
    return new OrderDetails(row.orderId(), row.tenant(), row.subject(), requestKey, row.status(), row.version(),
        row.sku(), row.quantity(), row.amount(), null, row.reservationKey(), "HELD", workflowId, "2026-01-01T00:00:00Z",
        List.of());
  }

  private void awaitRunClosed() {
    // the test server skips the late-notice window while the client waits for the result
    env.getWorkflowClient().newUntypedWorkflowStub(workflowId).getResult(Void.class);
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, runStatus());
  }

  private WorkflowExecutionStatus runStatus() {
    return env.getWorkflowServiceStubs().blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder().setNamespace(env.getNamespace())
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId)).build())
        .getWorkflowExecutionInfo().getStatus();
  }

  private static void assertSameAnswer(Response expected, Response actual) {
    assertEquals(expected.getStatus(), actual.getStatus());
    assertEquals(expected.getEntity(), actual.getEntity());
  }

  @Test
  void aKeyedPayRetriedAfterTheRunCompletedGetsItsFirstAnswer() {
    Response first = resource.pay(buyer, orderId, "pay-1");
    assertEquals(200, first.getStatus());
    CommandAnswer answer = (CommandAnswer) first.getEntity();
    assertNull(answer.outcome());
    assertEquals(OrderStatus.PAID, answer.status());

    // while the run is open the engine answers the retry itself
    assertSameAnswer(first, resource.pay(buyer, orderId, "pay-1"));

    awaitRunClosed();
    assertSameAnswer(first, resource.pay(buyer, orderId, "pay-1"));
    // the quoted form of the key names the same key
    assertSameAnswer(first, resource.pay(buyer, orderId, "\"pay-1\""));

    // another key, or none, still gets today's answer from the row: the order is PAID, no pay runs
    Response other = resource.pay(buyer, orderId, "pay-2");
    assertEquals(409, other.getStatus());
    assertEquals(new CommandAnswer(CommandOutcome.REJECTED, orderId, OrderStatus.PAID, answer.version()), other.getEntity());
    Response unkeyed = resource.pay(buyer, orderId, null);
    assertEquals(409, unkeyed.getStatus());
    assertEquals(CommandOutcome.REJECTED, ((CommandAnswer) unkeyed.getEntity()).outcome());
    // ownership first: another principal's order stays 404, whatever key it sends
    WebApplicationException notFound = assertThrows(WebApplicationException.class,
        () -> resource.pay(new Caller(TENANT, "user-2"), orderId, "pay-1"));
    assertEquals(404, notFound.getResponse().getStatus());
    assertEquals(1, backend.path().stream().filter(s -> s == OrderStatus.PAID).count(), "one pay ran");
  }

  @Test
  void aKeyedPayRetriedToANewerRunOfTheOrderGetsItsFirstAnswer() {
    Response first = resource.pay(buyer, orderId, "pay-1");
    assertEquals(200, first.getStatus());
    awaitRunClosed();

    // a late notice of the charge starts a new run that loads the PAID order: it never saw pay-1
    orders.notify(workflowId, TENANT, SUBJECT, requestKey, orderId, new Notice(0, "late-1", "CHARGED", 1990, "txn-late"));
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING, runStatus());
    assertSameAnswer(first, resource.pay(buyer, orderId, "pay-1"));
    assertEquals(409, resource.pay(buyer, orderId, "pay-2").getStatus());
  }

  @Test
  void aKeyedPayRefusedIsAnsweredTheSameRefusalAfterTheRunClosed() {
    assertEquals(200, resource.pay(buyer, orderId, "pay-1").getStatus());
    // a second key while the run is open: the validator refuses it (no history)
    Response refused = resource.pay(buyer, orderId, "pay-2");
    assertEquals(409, refused.getStatus());
    assertEquals(CommandOutcome.REJECTED, ((CommandAnswer) refused.getEntity()).outcome());
    awaitRunClosed();
    assertSameAnswer(refused, resource.pay(buyer, orderId, "pay-2"));
  }

  @Test
  void aKeyedPayWhoseRunIsGoneOrSlowGetsItsFirstAnswer() {
    Response first = resource.pay(buyer, orderId, "pay-1");
    assertEquals(200, first.getStatus());
    awaitRunClosed();

    // the run's history past the namespace's retention: the engine knows no run of the order
    Orders engine = mock(Orders.class, withSettings().mockMaker(MockMakers.INLINE));
    OrderResource noRun = new OrderResource(engine, queries, mock(Skus.class, withSettings().mockMaker(MockMakers.INLINE)),
        null, null, CreateAdmission.fixed(4), 2, 1, new PayAnswers(pg.db()));
    when(engine.pay(anyString(), any())).thenThrow(new WorkflowNotFoundException(
        WorkflowExecution.newBuilder().setWorkflowId(workflowId).build(), "OrderWorkflow", null));
    assertSameAnswer(first, noRun.pay(buyer, orderId, "pay-1"));
    // another key: today's answer from the row (and that is its first answer from now on)
    Response other = noRun.pay(buyer, orderId, "pay-2");
    assertEquals(409, other.getStatus());
    assertEquals(CommandOutcome.REJECTED, ((CommandAnswer) other.getEntity()).outcome());
    assertSameAnswer(other, resource.pay(buyer, orderId, "pay-2"));

    // the engine not answering in time: a key answered before has its answer, a new one gets the 503
    org.mockito.Mockito.reset(engine);
    when(engine.pay(anyString(), any())).thenThrow(new Orders.DeadlineExceeded("pay", java.time.Duration.ofSeconds(10)));
    assertSameAnswer(first, noRun.pay(buyer, orderId, "pay-1"));
    WebApplicationException unavailable = assertThrows(WebApplicationException.class,
        () -> noRun.pay(buyer, orderId, "pay-3"));
    assertEquals(503, unavailable.getResponse().getStatus());
  }
}
