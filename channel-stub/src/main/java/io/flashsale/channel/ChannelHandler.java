package io.flashsale.channel;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Routes every HTTP request of the stub and implements the endpoints. Errors become JSON, never stack traces. */
final class ChannelHandler implements HttpHandler {
  private static final Logger log = LoggerFactory.getLogger(ChannelHandler.class);
  private static final Duration RELEASE_MAX_WAIT = Duration.ofSeconds(30);
  private static final Duration SEND_MAX_WAIT = Duration.ofSeconds(30);
  private static final String CHARGES_PREFIX = "/charges/";

  private record Reply(int status, Object body) {}

  /**
   * Who may do what: merchant calls need the merchant key, a charge may name only a configured
   * notify URL, and the lab endpoints (faults, release, reset, stats; the test surface's send)
   * exist only when the lab is on.
   */
  record Access(String merchantKey, Set<String> notifyUrls, boolean lab, boolean testSurface, boolean loopbackBound) {
    boolean merchant(String authorization) {
      if (authorization == null || !authorization.startsWith(BEARER)) return false;
      return MessageDigest.isEqual(authorization.substring(BEARER.length()).getBytes(StandardCharsets.UTF_8),
          merchantKey.getBytes(StandardCharsets.UTF_8));
    }
  }

  private static final String BEARER = "Bearer ";

  private final Ledger ledger;
  private final FaultRules rules;
  private final CallbackSender callbacks;
  private final Stats stats;

  private final Access access;

  ChannelHandler(Ledger ledger, FaultRules rules, CallbackSender callbacks, Stats stats, Access access) {
    this.access = access;
    this.ledger = ledger;
    this.rules = rules;
    this.callbacks = callbacks;
    this.stats = stats;
  }

  @Override
  public void handle(HttpExchange ex) {
    long started = System.nanoTime();
    String method = ex.getRequestMethod();
    String path = normalize(ex.getRequestURI().getRawPath());
    String[] mo = new String[1];
    Reply reply;
    try {
      reply = route(method, path, ex, mo);
    } catch (ApiException e) {
      reply = new Reply(e.status, e.body);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      reply = new Reply(503, Json.obj("error", "STOPPING"));
    } catch (Exception e) {
      log.error("{} {} merchant_order={} failed", method, path, mo[0], e);
      reply = new Reply(500, Json.obj("error", "INTERNAL", "message", e.getClass().getSimpleName()));
    }
    // the caller's trace context, when it sends one: a channel's own logs join the merchant's trace by it
    String traceparent = ex.getRequestHeaders().getFirst("traceparent");
    log.info("{} {} merchant_order={} -> {} ({} ms){}", method, path, mo[0], reply.status,
        (System.nanoTime() - started) / 1_000_000, traceparent == null ? "" : " traceparent=" + traceparent);
    send(ex, reply);
  }

  private Reply route(String method, String path, HttpExchange ex, String[] mo) throws Exception {
    if (path.equals("/health")) {
      requireMethod(method, "GET");
      return new Reply(200, Json.obj("ok", true));
    }
    if (path.startsWith("/_") || path.equals("/stats")) {
      if (!access.lab() || (path.equals("/_callbacks/send") && !access.testSurface())) {
        throw notFound(method, path);
      }
      labDoor(ex);
      return lab(method, path, ex, mo);
    }
    if (!access.merchant(ex.getRequestHeaders().getFirst("Authorization"))) {
      ex.getResponseHeaders().set("WWW-Authenticate", "Bearer realm=\"merchant\"");
      throw new ApiException(401, Json.obj("error", "UNAUTHORIZED", "message", "the merchant key is missing or wrong"));
    }
    if (path.startsWith(CHARGES_PREFIX) && path.length() > CHARGES_PREFIX.length()) {
      requireMethod(method, "GET");
      mo[0] = URLDecoder.decode(path.substring(CHARGES_PREFIX.length()), StandardCharsets.UTF_8);
      return queryCharge(mo[0]);
    }
    switch (path) {
      case "/charge":
        requireMethod(method, "POST");
        return charge(body(ex, false), mo);
      case "/close":
        requireMethod(method, "POST");
        return close(body(ex, false), mo);
      case "/refund":
        requireMethod(method, "POST");
        return refund(body(ex, false), mo);
      case "/statement":
        requireMethod(method, "GET");
        return statement();
      default:
        throw notFound(method, path);
    }
  }

  /** The lab's endpoints: faults, held callbacks, reset, stats, and the test surface's send. */
  private Reply lab(String method, String path, HttpExchange ex, String[] mo) throws Exception {
    switch (path) {
      case "/stats":
        requireMethod(method, "GET");
        return new Reply(200, stats.snapshot());
      case "/_faults":
        requireMethod(method, "POST");
        return faults(body(ex, false), mo);
      case "/_callbacks/release":
        requireMethod(method, "POST");
        return release(body(ex, false), mo);
      case "/_callbacks/send":
        requireMethod(method, "POST");
        return sendCallback(body(ex, false), mo);
      case "/_reset":
        requireMethod(method, "POST");
        return reset();
      default:
        throw notFound(method, path);
    }
  }

  /** A provider calls back only the merchant's registered URLs: a signed notice never goes elsewhere. */
  private String allowed(String notifyUrl) {
    if (!access.notifyUrls().contains(notifyUrl)) {
      throw new ApiException(422, Json.obj("error", "NOTIFY_URL_NOT_ALLOWED",
          "message", "notify_url is not one of the merchant's configured callback URLs"));
    }
    return notifyUrl;
  }

  /** localhost, 127.x.x.x or [::1], with or without a port. */
  private static final java.util.regex.Pattern LOOPBACK_HOST =
      java.util.regex.Pattern.compile("(localhost|127(\\.\\d{1,3}){3}|\\[::1\\])(:\\d{1,5})?");

  /**
   * The lab needs no key, so it keeps the admin port's door: an X-Requested-By header (a web page
   * cannot send one cross-origin, so it cannot reset the ledger or force declines) and, on a
   * loopback-bound stub, a loopback Host (a rebound DNS name cannot read its stats).
   */
  private void labDoor(HttpExchange ex) {
    String by = ex.getRequestHeaders().getFirst("X-Requested-By");
    if (by == null || by.isBlank()) {
      throw new ApiException(400, Json.obj("error", "REQUESTED_BY_REQUIRED",
          "message", "the lab endpoints need the X-Requested-By header"));
    }
    String host = ex.getRequestHeaders().getFirst("Host");
    if (access.loopbackBound() && (host == null
        || !LOOPBACK_HOST.matcher(host.toLowerCase(java.util.Locale.ROOT)).matches())) {
      throw new ApiException(403, Json.obj("error", "HOST_REFUSED",
          "message", "the lab of a loopback stub answers only a loopback Host"));
    }
  }

  private static ApiException notFound(String method, String path) {
    return new ApiException(404, Json.obj("error", "NOT_FOUND", "message", "no route " + method + " " + path));
  }

  private Reply charge(ObjectNode req, String[] moOut) throws InterruptedException {
    String rawMo = req.path("merchant_order").isTextual() ? req.get("merchant_order").asText() : null;
    stats.chargeRequest(rawMo == null || rawMo.isBlank() ? null : rawMo);
    String mo = moOut[0] = Json.requiredText(req, "merchant_order");
    BigDecimal amount = Json.requiredAmount(req, "amount");
    String notifyUrl = allowed(Json.requiredText(req, "notify_url"));
    FaultRule rule = rules.effective(mo);
    sleep(rule.holdRequest()); // before the charge takes effect: a close arriving meanwhile wins
    Ledger.ChargeOutcome out = ledger.charge(mo, amount, notifyUrl, rule.declines());
    Reply reply = switch (out.kind()) {
      case NEW, REPEAT -> new Reply(200, Json.obj("result", out.result(), "txn", out.txn()));
      case CLOSED -> new Reply(409, Json.obj("result", OrderRecord.CLOSED));
      case AMOUNT_MISMATCH -> new Reply(422, Json.obj("error", "AMOUNT_MISMATCH"));
    };
    sleep(rule.replyDelay()); // the effect is recorded; the reply is late
    return reply;
  }

  private Reply queryCharge(String mo) {
    stats.queryRequest();
    if (rules.effective(mo).queriesUnavailable()) {
      return new Reply(503, Json.obj("error", "UNAVAILABLE", "message", "queries of this order are unavailable (a lab fault)"));
    }
    Ledger.OrderView v = ledger.find(mo);
    if (v == null) {
      return new Reply(200, Json.obj("status", "NOT_FOUND"));
    }
    return new Reply(200, Json.obj("status", v.status(), "txn", v.txn(), "amount", Json.amount(v.amount())));
  }

  private Reply close(ObjectNode req, String[] moOut) {
    stats.closeRequest();
    String mo = moOut[0] = Json.requiredText(req, "merchant_order");
    Ledger.OrderView v = ledger.close(mo);
    return new Reply(200, Json.obj("status", v.status(), "txn", v.txn()));
  }

  private Reply refund(ObjectNode req, String[] moOut) throws InterruptedException {
    stats.refundRequest();
    String mo = moOut[0] = Json.requiredText(req, "merchant_order");
    String refundKey = Json.requiredText(req, "refund_key");
    BigDecimal amount = Json.requiredAmount(req, "amount");
    Ledger.RefundOutcome out = ledger.refund(mo, refundKey, amount);
    if (out.kind() == Ledger.RefundKind.ERROR) {
      return new Reply(422, Json.obj("error", out.error()));
    }
    if (out.kind() == Ledger.RefundKind.NEW) {
      sleep(rules.effective(mo).firstRefundReplyDelay()); // recorded; the first reply is late
    }
    return new Reply(200, Json.obj("result", OrderRecord.REFUNDED, "refund_id", out.refundId()));
  }

  private Reply statement() {
    List<Map<String, Object>> rows = ledger.statement().stream().map(LedgerRow::toJson).toList();
    return new Reply(200, Json.obj("rows", rows));
  }

  private Reply faults(ObjectNode req, String[] moOut) {
    String mo = moOut[0] = Json.optionalText(req, "merchant_order");
    rules.apply(mo, FaultRule.fromJson(req));
    return new Reply(200, Json.obj("ok", true));
  }

  private Reply release(ObjectNode req, String[] moOut) throws InterruptedException {
    String mo = moOut[0] = Json.requiredText(req, "merchant_order");
    String order = Json.optionalText(req, "order");
    boolean reverse;
    if (order == null || order.equalsIgnoreCase("fifo")) {
      reverse = false;
    } else if (order.equalsIgnoreCase("reverse")) {
      reverse = true;
    } else {
      throw ApiException.badRequest("order must be fifo or reverse");
    }
    int n = callbacks.release(mo, reverse, RELEASE_MAX_WAIT);
    return new Reply(200, Json.obj("released", n));
  }

  private Reply sendCallback(ObjectNode req, String[] moOut) throws InterruptedException {
    String mo = moOut[0] = Json.requiredText(req, "merchant_order");
    String kind = Json.requiredText(req, "kind");
    BigDecimal amount = Json.requiredAmount(req, "amount");
    String txn = Json.optionalText(req, "txn");
    String notifyId = Json.optionalText(req, "notify_id");
    String notifyUrl = Json.optionalText(req, "notify_url");
    if (notifyUrl != null) {
      allowed(notifyUrl);
    } else {
      notifyUrl = ledger.notifyUrl(mo);
      if (notifyUrl == null) {
        throw ApiException.badRequest("no notify_url given and merchant_order " + mo + " has none");
      }
    }
    if (notifyId == null) {
      notifyId = callbacks.nextNotifyId();
    }
    CallbackEvent event = new CallbackEvent(notifyId, mo, kind, amount, txn, notifyUrl);
    if (!callbacks.sendNow(event, SEND_MAX_WAIT)) {
      return new Reply(504, Json.obj("error", "NOT_DELIVERED", "notify_id", notifyId));
    }
    return new Reply(200, Json.obj("notify_id", notifyId));
  }

  private Reply reset() {
    callbacks.reset();
    rules.reset();
    ledger.reset();
    stats.reset();
    return new Reply(200, Json.obj("ok", true));
  }

  private static ObjectNode body(HttpExchange ex, boolean emptyAllowed) throws IOException {
    try (InputStream in = ex.getRequestBody()) {
      return Json.parseObject(in.readAllBytes(), emptyAllowed);
    }
  }

  private static void requireMethod(String actual, String expected) {
    if (!expected.equalsIgnoreCase(actual)) {
      throw new ApiException(405, Json.obj("error", "METHOD_NOT_ALLOWED", "message", "use " + expected));
    }
  }

  private static String normalize(String rawPath) {
    if (rawPath == null || rawPath.isEmpty()) {
      return "/";
    }
    return rawPath.length() > 1 && rawPath.endsWith("/") ? rawPath.substring(0, rawPath.length() - 1) : rawPath;
  }

  private static void sleep(long ms) throws InterruptedException {
    if (ms > 0) {
      Thread.sleep(ms);
    }
  }

  private static void send(HttpExchange ex, Reply reply) {
    try (ex) {
      byte[] bytes = Json.write(reply.body);
      ex.getResponseHeaders().set("Content-Type", "application/json");
      ex.sendResponseHeaders(reply.status, bytes.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(bytes);
      }
    } catch (IOException e) {
      // typically: the client gave up waiting (reply_delay_ms) and closed the connection
      log.info("reply {} not delivered: {}", reply.status, e.toString());
    }
  }
}
