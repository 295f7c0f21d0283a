package io.flashsale.channel;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Fault injection settings for one merchant order (or the default rule). Null fields are "not set";
 * the accessors below give the effective value.
 */
record FaultRule(
    Boolean decline,
    Long replyDelayMs,
    Long holdRequestMs,
    Long firstRefundReplyDelayMs,
    Long callbackCopies,
    Long callbackDelayMs,
    Boolean holdCallbacks,
    Boolean queryUnavailable) {

  static final FaultRule NONE = new FaultRule(null, null, null, null, null, null, null, null);

  static FaultRule fromJson(ObjectNode n) {
    Long copies = Json.optionalMillis(n, "callback_copies");
    if (copies != null && (copies < 1 || copies > 100)) {
      throw ApiException.badRequest("callback_copies must be between 1 and 100");
    }
    return new FaultRule(
        Json.optionalBoolean(n, "decline"),
        Json.optionalMillis(n, "reply_delay_ms"),
        Json.optionalMillis(n, "hold_request_ms"),
        Json.optionalMillis(n, "first_refund_reply_delay_ms"),
        copies,
        Json.optionalMillis(n, "callback_delay_ms"),
        Json.optionalBoolean(n, "hold_callbacks"),
        Json.optionalBoolean(n, "query_unavailable"));
  }

  /** Fields set in {@code update} replace ours; the others stay. */
  FaultRule mergedWith(FaultRule update) {
    return new FaultRule(
        pick(update.decline, decline),
        pick(update.replyDelayMs, replyDelayMs),
        pick(update.holdRequestMs, holdRequestMs),
        pick(update.firstRefundReplyDelayMs, firstRefundReplyDelayMs),
        pick(update.callbackCopies, callbackCopies),
        pick(update.callbackDelayMs, callbackDelayMs),
        pick(update.holdCallbacks, holdCallbacks),
        pick(update.queryUnavailable, queryUnavailable));
  }

  private static <T> T pick(T preferred, T fallback) {
    return preferred != null ? preferred : fallback;
  }

  boolean declines() {
    return Boolean.TRUE.equals(decline);
  }

  long replyDelay() {
    return replyDelayMs == null ? 0 : replyDelayMs;
  }

  long holdRequest() {
    return holdRequestMs == null ? 0 : holdRequestMs;
  }

  long firstRefundReplyDelay() {
    return firstRefundReplyDelayMs == null ? 0 : firstRefundReplyDelayMs;
  }

  int copies() {
    return callbackCopies == null ? 1 : callbackCopies.intValue();
  }

  long callbackDelay() {
    return callbackDelayMs == null ? 0 : callbackDelayMs;
  }

  boolean holdsCallbacks() {
    return Boolean.TRUE.equals(holdCallbacks);
  }

  /** Queries of the order answer 503: an order the service cannot settle by query stays UNKNOWN. */
  boolean queriesUnavailable() {
    return Boolean.TRUE.equals(queryUnavailable);
  }
}
