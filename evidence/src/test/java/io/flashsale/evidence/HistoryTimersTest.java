package io.flashsale.evidence;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.devstack.replay.ReplayGate;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.common.WorkflowExecutionHistory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Timers in the recorded histories. A run recorded since timed waits cancel their timer (the
 * await-cancels-timer or the lean-history version marker) keeps one timer per deadline: a
 * wake-up cancels a timer it no longer needs, or keeps the one whose deadline it still waits for. The callback stream (16 notices, 16 wake-ups) replays against the current code and shows
 * it; older histories show the pile-up they replay with.
 */
@org.junit.jupiter.api.Tag("in-memory-only") // engine-free: it runs once, in the fast run
class HistoryTimersTest {
  private static final List<String> MARKERS = List.of("await-cancels-timer", "lean-history");

  @Test
  void aCallbackStreamReplaysWithoutPilingUpTimers() throws Exception {
    Path stream = dir().resolve("x18-callback-stream-no-timer-pileup.json");
    ReplayGate.NamedHistory history = new ReplayGate.NamedHistory(stream.getFileName().toString(),
        WorkflowExecutionHistory.fromJson(Files.readString(stream)));
    ReplayGate.Report replay = new ReplayGate().replay(List.of(history));
    assertTrue(replay.passed(), replay.outcomes().toString());
    List<HistoryEvent> events = history.history().getEvents();
    long notices = events.stream().filter(e -> e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED).count();
    long cancelled = Histories.count(events, EventType.EVENT_TYPE_TIMER_CANCELED);
    int outstanding = Histories.maxOutstandingTimers(events);
    System.out.println("callback stream: " + notices + " signals, " + cancelled + " timers cancelled, at most "
        + outstanding + " running");
    assertTrue(notices >= 16, "the history holds the stream: " + notices + " signals");
    assertTrue(outstanding <= 1, "timers running at once: " + outstanding);
  }

  /**
   * A run of the current code keeps one timer per deadline: the order's wait (expiry, late-notice
   * window or a query's backoff) and at most one step's slow retry beside it (a data error while
   * the expiry timer runs, wf-data-error-attention.json), so never more than two at once. The
   * histories recorded before timers were cancelled pile up three or more for one wait.
   */
  @Test
  void everyHistoryOfTheCurrentCodeKeepsOneTimerPerDeadline() throws Exception {
    int pileUpsBefore = 0;
    try (Stream<Path> s = Files.list(dir())) {
      for (Path p : s.filter(f -> f.toString().endsWith(".json")).sorted().toList()) {
        List<HistoryEvent> events = WorkflowExecutionHistory.fromJson(Files.readString(p)).getEvents();
        int outstanding = Histories.maxOutstandingTimers(events);
        boolean current = MARKERS.stream().anyMatch(m -> Histories.hasVersionMarker(events, m));
        System.out.println(p.getFileName() + ": at most " + outstanding + " timers running"
            + (current ? "" : " (recorded before timers were cancelled)"));
        if (current) {
          assertTrue(outstanding <= MAX_CURRENT, p.getFileName() + ": " + outstanding + " timers running at once");
        } else if (outstanding > MAX_CURRENT) {
          pileUpsBefore++;
        }
      }
    }
    // the bound tells the two apart: the older histories exceed it
    assertTrue(pileUpsBefore > 0, "no history recorded before timers were cancelled exceeds " + MAX_CURRENT);
  }

  /** The order's one wait and one step's slow retry. */
  private static final int MAX_CURRENT = 2;

  private static Path dir() throws Exception {
    return Path.of(HistoryTimersTest.class.getResource("/histories").toURI());
  }
}
