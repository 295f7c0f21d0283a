package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.WorkerFactoryOptions;
import io.temporal.worker.WorkerOptions;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The engine ceiling's workflow is started and shaped like an order's create, and costs no more. */
class EngineCeilingTest {
  @Test
  void aCreateIsOneUpdateWithStartOneLocalStepTwoAttributesAndOnePendingTimer() {
    TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance(TestEnvironmentOptions.newBuilder()
        .setWorkerFactoryOptions(WorkerFactoryOptions.getDefaultInstance()).build());
    try {
      for (String name : List.of("OrderId", "OrderStatus", "Sku", "Tenant")) {
        env.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      }
      // the worker the bench starts, on the test engine's client
      io.temporal.worker.Worker worker = env.newWorker(EngineCeiling.TASK_QUEUE, WorkerOptions.getDefaultInstance());
      worker.registerWorkflowImplementationTypes(EngineCeiling.OrderShapedImpl.class);
      worker.registerActivitiesImplementations(new EngineCeiling.NoStep());
      env.start();

      assertEquals("w-1", EngineCeiling.create(env.getWorkflowClient(), "w-1", "t1", "sku-1"));
      // a second create on the same id meets the running workflow (USE_EXISTING), as an order's retry does
      assertEquals("w-1", EngineCeiling.create(env.getWorkflowClient(), "w-1", "t1", "sku-1"));

      List<HistoryEvent> events = env.getWorkflowClient().fetchHistory("w-1").getHistory().getEventsList();
      Map<EventType, Long> byType = events.stream()
          .collect(Collectors.groupingBy(HistoryEvent::getEventType, Collectors.counting()));
      System.out.println("engine ceiling history: " + events.size() + " events " + byType);
      HistoryEvent started = events.get(0);
      assertEquals(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, started.getEventType());
      assertTrue(started.getWorkflowExecutionStartedEventAttributes().getSearchAttributes().getIndexedFieldsMap()
          .keySet().containsAll(List.of("Tenant", "Sku")), "Tenant and Sku are set at start");
      assertEquals(2, byType.get(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED));
      assertEquals(2, byType.get(EventType.EVENT_TYPE_MARKER_RECORDED), "one local step per create");
      assertEquals(1, byType.get(EventType.EVENT_TYPE_TIMER_STARTED));
      assertEquals(null, byType.get(EventType.EVENT_TYPE_TIMER_FIRED), "the timer is still pending");
      assertEquals(null, byType.get(EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED), "no memo");
      HistoryEvent upsert = events.stream()
          .filter(e -> e.getEventType() == EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES).findFirst().orElseThrow();
      assertEquals(java.util.Set.of("OrderId", "OrderStatus"), upsert.getUpsertWorkflowSearchAttributesEventAttributes()
          .getSearchAttributes().getIndexedFieldsMap().keySet(), "only what a create changes");
    } finally {
      env.close();
    }
  }
}
