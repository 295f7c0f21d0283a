package io.flashsale.domain;

/** Names of the logging context (MDC) keys every module writes, so all log lines of an order share one key. */
public final class LogKeys {
  /** The order id: set by the API per request, by the worker per workflow and activity task. */
  public static final String ORDER_ID = "orderId";

  private LogKeys() {}
}
