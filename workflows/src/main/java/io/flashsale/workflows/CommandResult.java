package io.flashsale.workflows;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.OrderStatus;
import io.temporal.failure.ApplicationFailure;

/**
 * Answer of the pay and cancel updates. outcome is null for a pay that ran (status says where it
 * got), REJECTED when the precondition failed, CANCELLED / REPLAY_CANCEL for cancel.
 */
public record CommandResult(CommandOutcome outcome, OrderStatus status, int version) {

  /**
   * Marks an update validator's refusal. SDK 1.38 hands a validator's failure to the client with its
   * message only: the worker wraps the ApplicationFailure (type {@code WorkflowExecutionException},
   * no details, no cause), on the in-memory and the dev server alike (OrderWorkflowTest pins this).
   * So the answer travels in the message, {@code CommandAnsweredByValidator <outcome> <status>
   * <version>}, and in the details too, which are read first once an SDK keeps them.
   */
  public static final String ANSWERED_BY_VALIDATOR = "CommandAnsweredByValidator";

  /** The validator's refusal carrying this answer (nothing enters the workflow's history). */
  public ApplicationFailure refusal() {
    return ApplicationFailure.newNonRetryableFailure(
        ANSWERED_BY_VALIDATOR + " " + outcome + " " + status + " " + version, ANSWERED_BY_VALIDATOR, this);
  }

  /** The answer inside a validator's refusal (anywhere in the client's update exception), else null. */
  public static CommandResult refusedBy(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ApplicationFailure af && ANSWERED_BY_VALIDATOR.equals(af.getType()) && af.getDetails().getSize() > 0) {
        try {
          return af.getDetails().get(0, CommandResult.class);
        } catch (RuntimeException unreadable) {
          // details from another version of this record: the message says the same
        }
      }
      String message = t instanceof ApplicationFailure af ? af.getOriginalMessage() : t.getMessage();
      if (message == null || !message.startsWith(ANSWERED_BY_VALIDATOR + " ")) continue;
      String[] f = message.split(" ");
      if (f.length != 4) continue;
      return new CommandResult("null".equals(f[1]) ? null : CommandOutcome.valueOf(f[1]),
          "null".equals(f[2]) ? null : OrderStatus.valueOf(f[2]), Integer.parseInt(f[3]));
    }
    return null;
  }
}
