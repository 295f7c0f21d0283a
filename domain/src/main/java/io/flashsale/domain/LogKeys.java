package io.flashsale.domain;

/** Names of the logging context (MDC) keys every module writes, so all log lines of an order share one key. */
public final class LogKeys {
  /** The order id: set by the API per request, by the worker per workflow and activity task. */
  public static final String ORDER_ID = "orderId";
  /** The W3C trace id of the request or task the line belongs to (docs/DESIGN.md §Tracing). */
  public static final String TRACE_ID = "trace_id";
  /** The id of the span current when the line was written. */
  public static final String SPAN_ID = "span_id";

  private LogKeys() {}
}
