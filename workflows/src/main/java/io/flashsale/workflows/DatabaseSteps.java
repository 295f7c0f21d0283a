package io.flashsale.workflows;

import io.flashsale.domain.OrderView;
import io.temporal.activity.ActivityOptions;
import io.temporal.activity.LocalActivityOptions;
import io.temporal.api.enums.v1.RetryState;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.TimeoutFailure;
import io.temporal.workflow.CancellationScope;
import io.temporal.workflow.TimerOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The order's database steps: where they run (bounded local activities or activity tasks, per the
 * run's settings), their options and retries, and the operator's attention a data error asks for
 * (search attribute {@link OrderWorkflow#ORDER_ATTENTION}; docs/DESIGN.md §Workflow design,
 * "Data errors and OrderAttention").
 */
final class DatabaseSteps {
  private static final Logger log = Workflow.getLogger(OrderWorkflowImpl.class);

  private static final RetryOptions DB_RETRY =
      RetryOptions.newBuilder()
          .setInitialInterval(Duration.ofMillis(100))
          .setBackoffCoefficient(2)
          // bounded backoff, unlimited attempts: an order converges after a database outage
          .setMaximumInterval(Duration.ofSeconds(5))
          .setDoNotRetry(IllegalArgumentException.class.getName(), OrderActivities.DATA_ERROR)
          .build();

  /** Database steps as activity tasks: any activity worker runs them. */
  private static final ActivityOptions TASK =
      ActivityOptions.newBuilder()
          .setStartToCloseTimeout(OrderActivities.DB_ACTIVITY_TIMEOUT)
          .setRetryOptions(DB_RETRY)
          .build();

  /** The database steps as local activities, bounded (LOCAL_DB_STEP_BOUND), then as activity tasks. */
  private static final LocalActivityOptions BOUNDED_LOCAL =
      LocalActivityOptions.newBuilder()
          .setStartToCloseTimeout(OrderActivities.DB_ACTIVITY_TIMEOUT)
          .setRetryOptions(DB_RETRY)
          .setScheduleToCloseTimeout(OrderActivities.LOCAL_DB_STEP_BOUND)
          .build();

  /** Where this run's steps execute; decided by the settings it started with. */
  private final boolean local;
  /** The order id the run was started with (a run that loads its order), else null. */
  private final String startOrderId;
  private final Supplier<OrderView> order;
  private final Consumer<String> attentionEffect;
  /** The hand the run raised for the channel (a round ran out, a refusal), restored when a data error's flag goes. */
  private final Supplier<io.flashsale.domain.Attention> raisedByRun;

  /** Why the order waits for an operator (a data error), or null. */
  private String attention;

  /**
   * startOrderId and order name the order the steps work for (in the log and the details);
   * attentionEffect takes the run's last effect when a data error flags the order.
   */
  DatabaseSteps(boolean local, String startOrderId, Supplier<OrderView> order, Consumer<String> attentionEffect,
      Supplier<io.flashsale.domain.Attention> raisedByRun) {
    this.raisedByRun = raisedByRun;
    this.local = local;
    this.startOrderId = startOrderId;
    this.order = order;
    this.attentionEffect = attentionEffect;
  }

  private String orderIdForLogs() {
    OrderView o = order.get();
    return o != null ? o.orderId() : startOrderId != null ? startOrderId : Workflow.getInfo().getWorkflowId();
  }

  /**
   * One database call. A bounded local step that ran out of time (the database is down or slow)
   * is called again as an activity task, whose retries the server keeps without history events;
   * every step is idempotent, so an attempt that did commit is answered again.
   */
  <T> T call(String what, Function<OrderActivities, T> call) {
    // the summary names the step and the order, for the history (docs/DESIGN.md §Readable histories)
    String summary = what + " " + orderIdForLogs();
    if (!local) return call.apply(task(summary));
    try {
      return call.apply(Workflow.newLocalActivityStub(OrderActivities.class,
          LocalActivityOptions.newBuilder(BOUNDED_LOCAL).setSummary(summary).build()));
    } catch (ActivityFailure e) {
      // out of time: the retries stopped at the bound (RETRY_STATE_TIMEOUT, the last attempt's error
      // as cause) or an attempt was cut off by it
      boolean outOfTime = e.getRetryState() == RetryState.RETRY_STATE_TIMEOUT || e.getCause() instanceof TimeoutFailure;
      if (!outOfTime) throw e;
      log.warn("order {} {}: local step ran out after {}, going on as an activity task",
          orderIdForLogs(), what, OrderActivities.LOCAL_DB_STEP_BOUND);
      return call.apply(task(summary));
    }
  }

  private static OrderActivities task(String summary) {
    return Workflow.newActivityStub(OrderActivities.class, ActivityOptions.newBuilder(TASK).setSummary(summary).build());
  }

  /**
   * One database step. Transient errors are retried by the activity's retry policy; a data error
   * no retry fixes leaves the order where it is (never FAILED: the channel may have charged),
   * flags it for an operator and is tried again slowly, so a repaired row lets it go on.
   */
  <T> T step(String what, Function<OrderActivities, T> call) {
    long waitMillis = 60_000;
    boolean flagged = false;
    while (true) {
      try {
        T result = call(what, call);
        if (flagged) clearAttention(); // only the step that raised the flag clears it
        return result;
      } catch (ActivityFailure e) {
        if (e.getCause() instanceof CanceledFailure && CancellationScope.current().isCancelRequested()
            && Workflow.getVersion(ChangeIds.WORKFLOW_CANCEL, Workflow.DEFAULT_VERSION, 1) >= 1) {
          // the run was cancelled while the step ran: settle the order (run()), do not fail the run
          throw new CanceledFailure("run cancelled during " + what);
        }
        if (!isDataError(e)
            || Workflow.getVersion(ChangeIds.DATA_ERROR, Workflow.DEFAULT_VERSION, 1) == Workflow.DEFAULT_VERSION) {
          throw e;
        }
        flagAttention(what, e);
        flagged = true;
        Workflow.newTimer(Duration.ofMillis(waitMillis), TimerOptions.newBuilder()
            .setSummary("retry " + what + " of " + orderIdForLogs() + " after a data error").build()).get();
        waitMillis = Math.min(waitMillis * 2, 3_600_000);
      }
    }
  }

  private static boolean isDataError(ActivityFailure e) {
    return e.getCause() instanceof ApplicationFailure af && OrderActivities.DATA_ERROR.equals(af.getType());
  }

  private void flagAttention(String what, ActivityFailure e) {
    String cause = e.getCause() == null ? e.getMessage() : e.getCause().getMessage();
    attention = OrderActivities.DATA_ERROR + " in " + what + ": " + cause;
    String effect = "ATTENTION " + attention;
    attentionEffect.accept(effect);
    OrderView o = order.get();
    log.error("order {} needs an operator: {}", orderIdForLogs(), attention);
    Workflow.upsertTypedSearchAttributes(OrderWorkflow.ORDER_ATTENTION.valueSet(OrderActivities.DATA_ERROR));
    Visibility.attentionDetails(o, effect);
  }

  private void clearAttention() {
    attention = null;
    io.flashsale.domain.Attention raised = raisedByRun.get();
    Workflow.upsertTypedSearchAttributes(raised != null
        ? OrderWorkflow.ORDER_ATTENTION.valueSet(raised.value()) : OrderWorkflow.ORDER_ATTENTION.valueUnset());
  }
}
