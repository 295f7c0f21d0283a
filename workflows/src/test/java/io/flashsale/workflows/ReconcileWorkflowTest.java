package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The reconcile workflow writes its activity's outcome into the memo and the search attribute. */
class ReconcileWorkflowTest {
  static final AtomicInteger calls = new AtomicInteger();
  static volatile ReconcileResult next;

  @RegisterExtension
  static final TestWorkflowExtension engine = TestWorkflowExtension.newBuilder()
      .registerWorkflowImplementationTypes(ReconcileWorkflowImpl.class)
      .setActivityImplementations((ReconcileActivities) () -> {
        calls.incrementAndGet();
        return next;
      })
      .registerSearchAttribute(ReconcileWorkflow.OUTCOME.getName(), IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
      .build();

  @Test
  void repairedRunCarriesItsOutcome(WorkflowClient client, Worker worker) {
    next = ReconcileResult.of(List.of("ord-1", "ord-2"), Map.of(), 0, "reconcile ... drift=0");
    ReconcileWorkflow run = client.newWorkflowStub(ReconcileWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId("reconcile-1").setTaskQueue(worker.getTaskQueue()).build());
    ReconcileResult result = run.run();
    assertEquals(ReconcileResult.REPAIRED, result.outcome());
    assertTrue(result.clean());
    assertEquals(2, result.repairedCount());
    WorkflowExecutionDescription d = WorkflowStub.fromTyped(run).describe();
    assertEquals("REPAIRED", d.getMemo(ReconcileWorkflow.MEMO_OUTCOME, String.class));
    assertEquals(2, d.getMemo(ReconcileWorkflow.MEMO_REPAIRED, Integer.class));
    assertEquals("reconcile ... drift=0", d.getMemo(ReconcileWorkflow.MEMO_SUMMARY, String.class));
    assertEquals("REPAIRED", d.getTypedSearchAttributes().get(ReconcileWorkflow.OUTCOME));
  }

  @Test
  void findingsMakeItFindings(WorkflowClient client, Worker worker) {
    next = ReconcileResult.of(List.of(), Map.of("ORPHAN", 1, "GLOBAL", 2), 0, "s");
    ReconcileWorkflow run = client.newWorkflowStub(ReconcileWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId("reconcile-2").setTaskQueue(worker.getTaskQueue()).build());
    ReconcileResult result = run.run();
    assertEquals(ReconcileResult.FINDINGS, result.outcome());
    assertFalse(result.clean());
    WorkflowExecutionDescription d = WorkflowStub.fromTyped(run).describe();
    assertEquals("FINDINGS", d.getTypedSearchAttributes().get(ReconcileWorkflow.OUTCOME));
    assertEquals(Map.of("GLOBAL", 2, "ORPHAN", 1), d.getMemo(ReconcileWorkflow.MEMO_FINDINGS, Map.class));
  }

  @Test
  void resultNamesAtMostFiftyOrders() {
    List<String> many = java.util.stream.IntStream.range(0, 120).mapToObj(i -> "ord-" + i).toList();
    ReconcileResult r = ReconcileResult.of(many, Map.of(), 0, "s");
    assertEquals(120, r.repairedCount());
    assertEquals(ReconcileResult.NAMED, r.repaired().size());
    assertEquals(ReconcileResult.CLEAN, ReconcileResult.of(List.of(), Map.of(), 0, "s").outcome());
  }
}
