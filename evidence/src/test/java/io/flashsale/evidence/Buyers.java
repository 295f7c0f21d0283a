package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.LinkedHashMap;
import java.util.Map;

/** What a buyer does over HTTP: log in, create with an idempotency key, pay, cancel, look. */
final class Buyers {
  private Buyers() {}

  static Map<String, Object> order(String requestKey, String sku, int quantity) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("request_key", requestKey);
    body.put("sku", sku);
    body.put("quantity", quantity);
    return body;
  }

  static HttpJson.Reply create(HttpJson buyer, String requestKey, String sku, int quantity) {
    return buyer.post("/orders", order(requestKey, sku, quantity));
  }

  /**
   * The body a retry of a create answers: the first answer's body with outcome REPLAY instead of
   * CREATED, every order field the same, byte for byte.
   */
  static String asReplay(String createdBody) {
    if (!createdBody.startsWith("{\"outcome\":\"CREATED\",")) throw new IllegalArgumentException("not a CREATED answer: " + createdBody);
    return "{\"outcome\":\"REPLAY\"," + createdBody.substring("{\"outcome\":\"CREATED\",".length());
  }

  /** A retry's answer: 200 REPLAY, Idempotent-Replayed: true, and the first answer's order fields. */
  static boolean isReplayOf(HttpJson.Reply retry, HttpJson.Reply created) {
    return retry.status() == 200 && "true".equals(retry.header("Idempotent-Replayed"))
        && retry.raw().equals(asReplay(created.raw()));
  }

  static HttpJson.Reply pay(HttpJson buyer, String orderId) {
    return buyer.post("/orders/" + orderId + "/pay", null);
  }

  static HttpJson.Reply cancel(HttpJson buyer, String orderId) {
    return buyer.post("/orders/" + orderId + "/cancel", null);
  }

  /** A fault rule at the channel for one merchant order. */
  static void fault(HttpJson channel, String orderId, Map<String, Object> rule) {
    Map<String, Object> body = new LinkedHashMap<>(rule);
    body.put("merchant_order", orderId);
    HttpJson.Reply r = channel.post("/_faults", body);
    if (r.status() != 200) throw new IllegalStateException("fault rule: " + r.raw());
  }

  static int chargeRequests(HttpJson channel, String orderId) {
    return channel.get("/stats").body().path("charge_requests_by_order").path(orderId).asInt(0);
  }
}
