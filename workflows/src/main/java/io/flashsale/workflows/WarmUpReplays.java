package io.flashsale.workflows;

import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.worker.Worker;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The order workflow's own code run before the instance is up, with no effect: the worker that
 * runs {@link OrderWorkflowImpl} replays recorded histories of the default path (a paid order, an
 * expired one, recorded on the dev server), bundled here, so the first buyers' workflow tasks meet
 * compiled workflow code (docs/DESIGN.md §Warm from the first buyer). A replay runs the workflow
 * code against the recorded events in this process: it calls no activity, writes nothing and asks
 * the engine nothing. The bundled histories are copies of the replay gate's
 * {@code path-dev-server-paid} and {@code -expired}; {@code WarmUpReplaysTest} replays them against
 * this code, so one that no longer replays fails the build.
 */
public final class WarmUpReplays {
  static final List<String> HISTORIES = List.of("warm-up/order-paid.json", "warm-up/order-expired.json");

  private final Worker ordersWorker;
  private final List<WorkflowExecutionHistory> histories;

  /** ordersWorker: the worker that registers {@link OrderWorkflowImpl} (no poll is made for a replay). */
  public WarmUpReplays(Worker ordersWorker) {
    this.ordersWorker = ordersWorker;
    this.histories = histories();
  }

  /** Replay {@code n}: one of the bundled histories in turn; throws what the replay threw. */
  public void replay(int n) throws Exception {
    ordersWorker.replayWorkflowExecution(histories.get(n % histories.size()));
  }

  static List<WorkflowExecutionHistory> histories() {
    return HISTORIES.stream().map(WarmUpReplays::load).toList();
  }

  private static WorkflowExecutionHistory load(String name) {
    try (InputStream in = WarmUpReplays.class.getResourceAsStream(name)) {
      if (in == null) throw new IllegalStateException("missing bundled history " + name);
      return WorkflowExecutionHistory.fromJson(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
