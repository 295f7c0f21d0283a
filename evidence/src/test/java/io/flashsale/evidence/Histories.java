package io.flashsale.evidence;

import io.temporal.api.common.v1.Payloads;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.history.v1.MarkerRecordedEventAttributes;
import io.temporal.common.WorkflowExecutionHistory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** Reading a workflow history: events of a type, timers left running, markers. */
final class Histories {
  /** The marker a local activity leaves in the history instead of its activity task events. */
  static final String LOCAL_ACTIVITY_MARKER = "LocalActivity";

  /** The marker Workflow.getVersion leaves; its details name the change id. */
  static final String VERSION_MARKER = "Version";

  private Histories() {}

  static List<HistoryEvent> of(Stack stack, String workflowId) {
    return stack.wiring.temporal().client().fetchHistory(workflowId).getHistory().getEventsList();
  }

  /**
   * The history once no workflow task is in flight and nothing was added for a second (a signal
   * whose step has committed still has its marker and task completion to write): what an
   * experiment counts "no event added" from. Fails after 30 s.
   */
  static List<HistoryEvent> settled(Stack stack, String workflowId) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 30_000;
    List<HistoryEvent> last = of(stack, workflowId);
    while (System.currentTimeMillis() < deadline) {
      Thread.sleep(1_000);
      List<HistoryEvent> now = of(stack, workflowId);
      EventType tail = now.get(now.size() - 1).getEventType();
      boolean taskInFlight = tail == EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
          || tail == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED;
      if (now.size() == last.size() && !taskInFlight) return now;
      last = now;
    }
    throw new AssertionError("the history of " + workflowId + " did not settle within 30 s");
  }

  /** The recorded histories (src/test/resources/histories), by file name. */
  static List<Path> recorded() throws IOException {
    Path dir;
    try {
      dir = Path.of(Histories.class.getResource("/histories").toURI());
    } catch (java.net.URISyntaxException e) {
      throw new IOException(e);
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
  }

  static List<HistoryEvent> read(Path file) throws IOException {
    return WorkflowExecutionHistory.fromJson(Files.readString(file)).getEvents();
  }

  static long count(List<HistoryEvent> events, EventType type) {
    return events.stream().filter(e -> e.getEventType() == type).count();
  }

  /** The most timers started and neither fired nor cancelled at one point of the history. */
  static int maxOutstandingTimers(List<HistoryEvent> events) {
    Set<String> open = new HashSet<>();
    int max = 0;
    for (HistoryEvent e : events) {
      switch (e.getEventType()) {
        case EVENT_TYPE_TIMER_STARTED -> open.add(e.getTimerStartedEventAttributes().getTimerId());
        case EVENT_TYPE_TIMER_FIRED -> open.remove(e.getTimerFiredEventAttributes().getTimerId());
        case EVENT_TYPE_TIMER_CANCELED -> open.remove(e.getTimerCanceledEventAttributes().getTimerId());
        default -> { }
      }
      max = Math.max(max, open.size());
    }
    return max;
  }

  /**
   * The activity types the history ran as local activities (the {@code type} detail of each
   * LocalActivity marker, e.g. BeginPay), sorted.
   */
  static Set<String> localActivityTypes(List<HistoryEvent> events) {
    Set<String> types = new TreeSet<>();
    for (MarkerRecordedEventAttributes m : markers(events, LOCAL_ACTIVITY_MARKER)) {
      Payloads type = m.getDetailsMap().get("type");
      if (type == null || type.getPayloadsCount() == 0) continue;
      types.add(type.getPayloads(0).getData().toStringUtf8().replace("\"", "").strip());
    }
    return types;
  }

  /** A getVersion marker of this change id (its details carry the id as a JSON payload). */
  static boolean hasVersionMarker(List<HistoryEvent> events, String changeId) {
    return markers(events, VERSION_MARKER).stream()
        .flatMap(m -> m.getDetailsMap().values().stream())
        .flatMap(payloads -> payloads.getPayloadsList().stream())
        .anyMatch(payload -> payload.getData().toStringUtf8().contains("\"" + changeId + "\""));
  }

  private static List<MarkerRecordedEventAttributes> markers(List<HistoryEvent> events, String name) {
    return events.stream().filter(e -> e.getEventType() == EventType.EVENT_TYPE_MARKER_RECORDED)
        .map(HistoryEvent::getMarkerRecordedEventAttributes)
        .filter(m -> name.equals(m.getMarkerName()))
        .toList();
  }
}
