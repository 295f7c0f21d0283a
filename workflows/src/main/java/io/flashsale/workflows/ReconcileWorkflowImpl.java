package io.flashsale.workflows;

import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** Runs the activity once (retried a few times) and writes its outcome into the memo and a search attribute. */
public class ReconcileWorkflowImpl implements ReconcileWorkflow {
  /**
   * A report reads every order and the channel's whole ledger: minutes on a big table. Three
   * attempts, then the run fails and the schedule's next action tries again.
   */
  private final ReconcileActivities activities = Workflow.newActivityStub(ReconcileActivities.class,
      ActivityOptions.newBuilder()
          .setStartToCloseTimeout(Duration.ofMinutes(10))
          .setRetryOptions(RetryOptions.newBuilder().setInitialInterval(Duration.ofSeconds(5)).setMaximumAttempts(3)
              .build())
          .build());

  @Override
  public ReconcileResult run() {
    ReconcileResult result = activities.reconcileAndRepair();
    Map<String, Object> memo = new LinkedHashMap<>();
    memo.put(MEMO_OUTCOME, result.outcome());
    memo.put(MEMO_REPAIRED, result.repairedCount());
    memo.put(MEMO_FINDINGS, result.findings());
    memo.put(MEMO_SUMMARY, result.summary());
    Workflow.upsertMemo(memo);
    Workflow.upsertTypedSearchAttributes(OUTCOME.valueSet(result.outcome()));
    return result;
  }
}
