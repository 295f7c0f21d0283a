package io.flashsale.channel;

import java.util.LinkedHashMap;
import java.util.Map;

/** Request and callback counters served by GET /stats. */
final class Stats {
  private long chargeRequests;
  private final Map<String, Long> chargeRequestsByOrder = new LinkedHashMap<>();
  private long closeRequests;
  private long refundRequests;
  private long queryRequests;
  private long callbacksSent;

  synchronized void chargeRequest(String merchantOrder) {
    chargeRequests++;
    if (merchantOrder != null) {
      chargeRequestsByOrder.merge(merchantOrder, 1L, Long::sum);
    }
  }

  synchronized void closeRequest() {
    closeRequests++;
  }

  synchronized void refundRequest() {
    refundRequests++;
  }

  synchronized void queryRequest() {
    queryRequests++;
  }

  synchronized void callbackSent() {
    callbacksSent++;
  }

  synchronized Map<String, Object> snapshot() {
    return Json.obj(
        "charge_requests", chargeRequests,
        "charge_requests_by_order", new LinkedHashMap<>(chargeRequestsByOrder),
        "close_requests", closeRequests,
        "refund_requests", refundRequests,
        "query_requests", queryRequests,
        "callbacks_sent", callbacksSent);
  }

  synchronized void reset() {
    chargeRequests = 0;
    chargeRequestsByOrder.clear();
    closeRequests = 0;
    refundRequests = 0;
    queryRequests = 0;
    callbacksSent = 0;
  }
}
