package io.flashsale.workflows;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Step;
import io.temporal.activity.ActivityInterface;
import java.time.Duration;

/** Database side of an order. Every method is idempotent: Temporal may run it more than once. */
@ActivityInterface
public interface OrderActivities {

  /**
   * Failure type of a data error no retry can fix (SQLState class 22 or 23): non-retryable. Any
   * other database error (connection lost, serialization failure, ...) is retried with backoff.
   */
  String DATA_ERROR = "DataError";

  /** Start-to-close timeout of one attempt of a step; the pool's connection timeout stays below it. */
  Duration DB_ACTIVITY_TIMEOUT = Duration.ofSeconds(15);

  /**
   * How long a step run as a local activity retries before it goes on as an activity task. While a
   * local step runs past the workflow task timeout (10 s) the worker completes a workflow task
   * every ~8 s to keep it, three events each; an activity task's retries add none. So an outage
   * costs a run a bounded number of events, not ~22 a minute (docs/DESIGN.md §Workflow design).
   * Above one full attempt (DB_ACTIVITY_TIMEOUT), so a slow but healthy step still finishes locally.
   */
  Duration LOCAL_DB_STEP_BOUND = Duration.ofSeconds(20);

  /** Order row + HELD reservation + first transition in one transaction, or why not. */
  CreateResult reserve(CreateOrder request, String workflowId);

  OrderView load(String orderId);

  /**
   * The order of this request key if its run made it (its workflow id), else null: what a reserve
   * committed in a workflow task that never completed left behind.
   */
  OrderView findOfRun(String tenant, String subject, String requestKey, String workflowId);

  /** CREATED → PAYING, committed before the channel is called. */
  Step beginPay(String orderId);

  /** Apply a charge / query / close answer (UNKNOWN moves PAYING → UNKNOWN). */
  Step applyChannelAnswer(String orderId, ChannelAnswer answer, String cause);

  /** CREATED → CANCELLED and release the reservation. */
  Step cancel(String orderId, String cause);

  /** Reservation TTL ran out: CANCELLED when CREATED; released (order waits) when PAYING/UNKNOWN. */
  Step expireReservation(String orderId);

  /**
   * Records the arrival of a notice that did not come through the API (an operator's CLI signal):
   * once per sourceRef, however often retried; a rejected one is recorded with its effect. Returns
   * the notice with its arrival id.
   */
  Notice recordSignalArrival(String orderId, Notice notice, String sourceRef);

  /** Apply one recorded callback and store its effect on its payment_notification row. */
  Step applyNotice(String orderId, Notice notice);

  /** REFUNDING → REFUNDED once the channel confirmed the refund. */
  Step completeRefund(String orderId, String cause);

  /**
   * Records on the order's row why it needs an operator ({@code orders.attention}, a value of
   * {@link io.flashsale.domain.Attention}, with a detail and since when), or clears it when reason
   * is null. Idempotent; touches neither status nor version.
   */
  void markAttention(String orderId, String reason, String detail);
}
