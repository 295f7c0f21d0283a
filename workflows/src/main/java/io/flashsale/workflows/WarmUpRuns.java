package io.flashsale.workflows;

import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WithStartWorkflowOperation;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowUpdateStage;
import java.time.Duration;
import java.util.UUID;

/**
 * Makes {@link WarmUpWorkflow} runs, each started and answered by one update-with-start as a create
 * is, on a task queue of this instance's own ({@code flashsale-warm-up-<tag>}), polled by a worker
 * of this process with the orders' worker options: the runs compile the same client and worker
 * code as a create, and no other process (another instance, an older build during a deploy) ever
 * gets one. Ids are {@code warm-up-<tag>-<n>}; a run not picked up ends at its execution timeout.
 */
public final class WarmUpRuns {
  /** Longer than a warm-up; short enough that a run nobody took does not linger. */
  static final Duration EXECUTION_TIMEOUT = Duration.ofMinutes(1);

  private final WorkflowClient client;
  private final String tag = UUID.randomUUID().toString().substring(0, 8);
  private final String taskQueue;

  public WarmUpRuns(WorkflowClient client) {
    this(client, "flashsale-warm-up-");
  }

  /** queuePrefix: the tag is added to it. */
  public WarmUpRuns(WorkflowClient client, String queuePrefix) {
    this.client = client;
    this.taskQueue = queuePrefix + tag;
  }

  /** This instance's queue: a worker of this process polls it with {@link WarmUpWorkflowImpl} and its echo. */
  public String taskQueue() {
    return taskQueue;
  }

  /** The id of run {@code n} made here. */
  public String workflowId(int n) {
    return "warm-up-" + tag + "-" + n;
  }

  /** Run {@code n}: returns once its update is answered; throws what the engine refused. */
  public void touch(int n) {
    WarmUpWorkflow wf = client.newWorkflowStub(WarmUpWorkflow.class, WorkflowOptions.newBuilder()
        .setWorkflowId(workflowId(n))
        .setTaskQueue(taskQueue)
        .setWorkflowExecutionTimeout(EXECUTION_TIMEOUT)
        .setWorkflowIdConflictPolicy(WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
        .build());
    String token = String.valueOf(n);
    String echoed = WorkflowClient.executeUpdateWithStart(wf::touch, token,
        UpdateOptions.<String>newBuilder().setWaitForStage(WorkflowUpdateStage.COMPLETED).build(),
        new WithStartWorkflowOperation<>(wf::run));
    if (!token.equals(echoed)) throw new IllegalStateException("warm-up run " + n + " answered " + echoed);
  }
}
