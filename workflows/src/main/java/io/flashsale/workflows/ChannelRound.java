package io.flashsale.workflows;

import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.CancellationScope;
import io.temporal.workflow.CompletablePromise;
import io.temporal.workflow.Functions;
import io.temporal.workflow.Workflow;

/**
 * One round at the channel in flight: an activity started in a cancellation scope of its own, so
 * the loop can wait for it beside notices and cancel it when the order leaves the status the
 * round was for. Its end is a value, never a failed promise (docs/DESIGN.md §Every order ends).
 */
final class ChannelRound<T> {
  /** How a round ended: its result, or the failure that ended it. */
  record End<T>(T result, RuntimeException failure) {
    boolean succeeded() {
      return failure == null;
    }

    /** The channel definitely refused (a non-retryable failure of this type, e.g. REFUND_REFUSED). */
    boolean refused(String type) {
      return failure instanceof ActivityFailure a && a.getCause() instanceof ApplicationFailure af
          && type.equals(af.getType());
    }

    /** The round was cancelled (the order left its status, or the run was cancelled). */
    boolean cancelled() {
      return failure instanceof CanceledFailure
          || failure instanceof ActivityFailure a && a.getCause() instanceof CanceledFailure;
    }

    String why() {
      if (failure == null) return "answered";
      Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
      return cause.getMessage();
    }
  }

  private final CancellationScope scope;
  private final CompletablePromise<End<T>> ended;

  private ChannelRound(CancellationScope scope, CompletablePromise<End<T>> ended) {
    this.scope = scope;
    this.ended = ended;
  }

  static <T> ChannelRound<T> start(Functions.Func<T> call) {
    CompletablePromise<End<T>> ended = Workflow.newPromise();
    CancellationScope scope = Workflow.newCancellationScope(() -> Async.function(call).handle((result, failure) -> {
      ended.complete(new End<>(result, failure));
      return null;
    }));
    scope.run();
    return new ChannelRound<>(scope, ended);
  }

  boolean isDone() {
    return ended.isCompleted();
  }

  End<T> end() {
    return ended.get();
  }

  /** Stops the round's activity (the order no longer needs it). */
  void cancel() {
    if (!ended.isCompleted()) scope.cancel();
  }
}
