package io.flashsale.workflows;

/** Workflow ids derive from the idempotency scope so duplicate creates meet in one workflow. */
public final class WorkflowIds {
  public static final String TASK_QUEUE = "flashsale-orders";
  /** The channel's activities (charge, query, close, refund), with pollers of their own. */
  public static final String CHANNEL_TASK_QUEUE = "flashsale-channel";

  private WorkflowIds() {}

  public static String forScope(String tenant, String subject, String requestKey) {
    return "order:" + tenant + ":" + subject + ":" + requestKey;
  }
}
