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

  /** A pay with an Idempotency-Key (a retry with the key gets the first answer). */
  static HttpJson.Reply pay(HttpJson buyer, String orderId, String idempotencyKey) {
    return buyer.post("/orders/" + orderId + "/pay", null, idempotencyKey);
  }

  /** A cancel with an Idempotency-Key. */
  static HttpJson.Reply cancel(HttpJson buyer, String orderId, String idempotencyKey) {
    return buyer.post("/orders/" + orderId + "/cancel", null, idempotencyKey);
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

  /** At most this many 503s of one request are sent again: an overloaded moment, not an outage. */
  static final int MAX_503_RETRIES = 5;

  /** The pause before a retry when the 503 names none (Retry-After), and the longest one taken. */
  private static final long RETRY_PAUSE_MS = 500;
  private static final long MAX_RETRY_PAUSE_MS = 2_000;

  /** An answer once its 503s were sent again: the last reply and how many retries it took. */
  record Settled(HttpJson.Reply reply, int retries) {
    int status() {
      return reply.status();
    }

    String text(String field) {
      return reply.text(field);
    }
  }

  /** One request, sent as it is each time (same body, same request key or Idempotency-Key). */
  interface Request {
    HttpJson.Reply send() throws Exception;
  }

  /**
   * Sends the request, and again, unchanged, while it answers 503 (ENGINE_UNAVAILABLE, OVERLOADED:
   * "retry with the same key"), after its Retry-After (at most 2 s), at most {@value
   * #MAX_503_RETRIES} times. The same key is the point: a command the engine took before its 503
   * answers the retry with its own answer, it is not a second command. For the experiments that
   * count outcomes, so that an overloaded moment cannot change an exact count; they print the
   * retries ({@link #retriesNote}), never require none. Not for an experiment about the 503 itself.
   */
  static Settled retrying503(Request request) throws Exception {
    HttpJson.Reply r = request.send();
    int retries = 0;
    while (r.status() == 503 && retries < MAX_503_RETRIES) {
      Thread.sleep(retryPause(r));
      retries++;
      r = request.send();
    }
    return new Settled(r, retries);
  }

  private static long retryPause(HttpJson.Reply r) {
    return HttpJson.retryAfterMillis(r.header("Retry-After"), RETRY_PAUSE_MS, MAX_RETRY_PAUSE_MS);
  }

  /** How many 503s were sent again, for the experiment's output (a number to read, not a check). */
  static String retriesNote(java.util.Collection<Settled> answers) {
    int retries = 0;
    int retried = 0;
    for (Settled a : answers) {
      retries += a.retries();
      if (a.retries() > 0) retried++;
    }
    return "503s sent again with the same key: " + retries + " (" + retried + " of " + answers.size() + " requests)";
  }

  static int chargeRequests(HttpJson channel, String orderId) {
    return channel.get("/stats").body().path("charge_requests_by_order").path(orderId).asInt(0);
  }
}
