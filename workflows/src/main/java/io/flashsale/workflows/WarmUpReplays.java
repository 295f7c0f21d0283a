package io.flashsale.workflows;

import io.temporal.client.WorkflowClient;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The order workflow's own code run before the instance is up, with no effect: a worker that is
 * never started replays recorded histories of the default path (a paid order, an expired one,
 * recorded on the dev server), bundled here, so the first buyers' workflow tasks meet compiled
 * workflow code (docs/DESIGN.md §Warm from the first buyer). A replay runs the workflow code and the
 * SDK's state machines against the recorded events in this process: it calls no activity, writes
 * nothing and asks the engine nothing. The worker is of a factory of its own with no interceptor,
 * so a replay records no span (the histories carry their recording's sampled trace context) and
 * touches no order's log context; the client's data converter decodes, as the orders' worker does.
 * The bundled histories are copies of the replay gate's {@code path-dev-server-paid} and
 * {@code -expired}; {@code WarmUpReplaysTest} replays them against this code, so one that no longer
 * replays fails the build.
 */
public final class WarmUpReplays implements AutoCloseable {
  static final List<String> HISTORIES = List.of("warm-up/order-paid.json", "warm-up/order-expired.json");
  /** The replaying worker's queue: never polled (its factory is never started). */
  static final String QUEUE = "flashsale-warm-up-replay";

  private final WorkerFactory factory;
  private final Worker worker;
  private final List<WorkflowExecutionHistory> histories;

  public WarmUpReplays(WorkflowClient client) {
    this.histories = histories();
    this.factory = WorkerFactory.newInstance(client);
    this.worker = factory.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
  }

  /** Replay {@code n}: one of the bundled histories in turn; throws what the replay threw. */
  public void replay(int n) throws Exception {
    worker.replayWorkflowExecution(histories.get(n % histories.size()));
  }

  /** Once the warm-up ended: the factory, which never polled, is let go. */
  @Override
  public void close() {
    factory.shutdownNow();
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
