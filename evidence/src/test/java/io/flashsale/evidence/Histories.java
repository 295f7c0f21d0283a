package io.flashsale.evidence;

import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Reading a workflow history: events of a type, timers left running. */
final class Histories {
  private Histories() {}

  static List<HistoryEvent> of(Stack stack, String workflowId) {
    return stack.wiring.temporal().client().fetchHistory(workflowId).getHistory().getEventsList();
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
}
