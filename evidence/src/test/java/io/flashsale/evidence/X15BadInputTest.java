package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.paymentchannel.CallbackSignatures;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * bad input over HTTP gets a clear error, an RFC 9457 problem detail
 * (application/problem+json) with a stable code, on the API, the admin port and the fulfillment
 * consumer alike (a 401 with its challenge, a 405 with Allow); it stores nothing and leaves
 * nothing stuck: a NUL or a lone surrogate in a text field, integers past 64 bits, a non-numeric
 * page size, a signature timestamp too long to be a time, while a channel that adds a field to its
 * callbacks is still heard; order ids say nothing about sales volume (two tenants' orders made
 * in alternation take interleaved numbers of the one sequence, yet their ids are not consecutive
 * numbers, and each is "ord-" and twelve digits), while the order list still pages in creation
 * order; a production configuration with placeholder secrets refuses to start.
 */
@Tag("engine-independent") // its claim is about the HTTP layers' answers to bad input, the same on either engine
class X15BadInputTest {
  private static final String SECRET = "x15-callback-secret-0123456789abcdef";
  @RegisterExtension static final Stack stack = new Stack().with("channel.callbackSecret", SECRET);
  @RegisterExtension static final Evidence ev = new Evidence("X-15", "bad input: clear 400/401, nothing stored, nothing stuck");

  @Test
  void badInputIsRefusedCleanly() throws Exception {
    stack.sku("sku-x15", 50, 50);
    HttpJson buyer = stack.api.login("t1", "user-1501");
    String nul = "{\"request_key\":\"x15-nul\",\"sku\":\"sku-x15\",\"quantity\":1,\"note\":\"a\\u0000b\"}";
    HttpJson.Reply r = buyer.post("/orders", nul);
    ev.check(Problems.is(r, 400, "INVALID_TEXT"), "a NUL in note → " + Problems.shown(r, 400, "INVALID_TEXT"));
    String lone = "{\"request_key\":\"x15-sur\",\"sku\":\"sku-x15\",\"quantity\":1,\"note\":\"a\\ud800\"}";
    r = buyer.post("/orders", lone);
    ev.check(Problems.is(r, 400, "INVALID_TEXT"), "a lone surrogate → " + Problems.shown(r, 400, "INVALID_TEXT"));
    String huge = "{\"request_key\":\"x15-big\",\"sku\":\"sku-x15\",\"quantity\":18446744073709551617}";
    r = buyer.post("/orders", huge);
    ev.check(Problems.is(r, 400, "INVALID_FIELD"), "quantity 2^64+1 → 400, not wrapped to 1: " + Problems.shown(r, 400, "INVALID_FIELD"));
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders"), "nothing stored");
    ev.equal(201, Buyers.create(buyer, "x15-ok", "sku-x15", 1).status(), "the next create goes through: nothing stuck");

    r = buyer.get("/orders?limit=abc");
    ev.check(Problems.is(r, 400, "INVALID_LIMIT"), "limit=abc → " + Problems.shown(r, 400, "INVALID_LIMIT"));

    String id = stack.sql.text("SELECT order_id FROM orders");
    long now = System.currentTimeMillis() / 1000;
    String bigAmount = "{\"notify_id\":\"n-big\",\"merchant_order\":\"" + id
        + "\",\"kind\":\"CHARGED\",\"amount\":18446744073709551617}";
    r = stack.callback(bigAmount, CallbackSignatures.header(SECRET, now, bigAmount.getBytes(StandardCharsets.UTF_8)));
    ev.check(Problems.is(r, 400, "INVALID_FIELD") || Problems.is(r, 400, "MALFORMED_JSON"),
        "callback amount 2^64+1 → 400 problem: " + r.raw().trim());
    r = stack.callback(bigAmount, "t=" + "9".repeat(30) + ",v1=" + "0".repeat(64));
    ev.check(Problems.is(r, 401, "BAD_SIGNATURE"),
        "a 30-digit signature timestamp → 401 (not 500, which the channel would retry forever): " + Problems.shown(r, 401, "BAD_SIGNATURE"));
    ev.equal("Signature realm=\"flashsale-callbacks\", header=\"X-Channel-Signature\"", r.header("WWW-Authenticate"),
        "the callback's 401 names its challenge");
    String extra = "{\"notify_id\":\"n-extra\",\"merchant_order\":\"" + id
        + "\",\"kind\":\"DECLINED\",\"amount\":1990,\"channel_added_field\":\"v2\"}";
    ev.equal(200, callback(extra, CallbackSignatures.header(SECRET, now, extra.getBytes(StandardCharsets.UTF_8))),
        "a callback with a field this version does not know is accepted");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM payment_notification WHERE notify_id = 'n-big'"),
        "the refused callback recorded nothing");

    problemDetailsOnEveryServer(buyer);

    // no sales-volume oracle: a buyer of t1 and one of t2 order in alternation, so the database's
    // numbers interleave (t1's own are two apart); the ids must not show it
    stack.sku("t2", "sku-x15", 50, 50);
    HttpJson pager = stack.api.login("t1", "user-1502");
    HttpJson rival = stack.api.login("t2", "user-1503");
    List<String> created = new ArrayList<>();
    List<String> alternation = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      String mine = Buyers.create(pager, "x15-page-" + i, "sku-x15", 1).text("order_id");
      created.add(mine);
      alternation.add(mine);
      alternation.add(Buyers.create(rival, "x15-rival-" + i, "sku-x15", 1).text("order_id"));
    }
    boolean wellFormed = alternation.stream().allMatch(o -> o != null && o.matches("^ord-[0-9]{12}$"));
    ev.check(wellFormed, "every id is ord- and twelve digits (the API's pattern ^ord-[0-9]{4,12}$): " + alternation);
    if (wellFormed) {
      List<Long> numbers = new ArrayList<>();
      for (String o : alternation) numbers.add(stack.sql.count("SELECT seq FROM orders WHERE order_id = ?", o));
      ev.note("in creation order, alternating t1/t2: ids " + alternation + ", their numbers in the database " + numbers);
      boolean interleaved = true;
      for (int i = 1; i < numbers.size(); i++) interleaved &= numbers.get(i) > numbers.get(i - 1);
      ev.check(interleaved, "the database's numbers interleave: one sequence for both tenants, in creation order");
      ev.check(closest(alternation) > 2, "no two successive creates got consecutive id numbers (closest "
          + closest(alternation) + " apart)");
      ev.check(closest(created) > 2, "t1's consecutive orders' ids do not show the t2 order between them (closest "
          + closest(created) + " apart, not 2)");
      ev.equal(alternation.size(), (int) alternation.stream().distinct().count(), "every id is its own");
    }

    List<String> paged = new ArrayList<>();
    String cursor = null;
    do {
      HttpJson.Reply page = pager.get("/orders?limit=2" + (cursor == null ? "" : "&cursor=" + cursor));
      page.body().path("orders").forEach(o -> paged.add(o.path("order_id").asText()));
      cursor = page.body().path("next_cursor").isNull() ? null : page.body().path("next_cursor").asText();
    } while (cursor != null);
    ev.note("t1's buyer created " + created + ", listed " + paged + " (ids in text order: "
        + created.stream().sorted().toList() + ")");
    ev.equal(created, paged, "the list pages in creation order, whatever order the ids are in");

    // a production configuration with the example's placeholder secrets never starts
    try (ChildJvm prod = ChildJvm.start("x15-production-placeholders", Map.of(
        "dw.auth.secret", "change-me-too", "dw.channel.callbackSecret", "change-me", "dw.auth.devLogin", "true"),
        "server", "production.example.yml")) {
      int exit = prod.awaitExit(60_000);
      String log = prod.log();
      ev.check(exit != 0, "exit status " + exit + " (not 0)");
      ev.check(log.contains("refusing to start outside the local default")
          && log.contains("auth.secret is the placeholder 'change-me-too'")
          && log.contains("channel.callbackSecret is the placeholder 'change-me'"), "the message names both secrets");
      ev.check(log.contains("auth.devLogin is on") && log.contains("auth.devLoginOutsideLocalDefault"),
          "dev login outside the local default without its acknowledgement: the message names the setting");
    }
  }

  /**
   * A sample of errors from each of the service's servers, on the wire: each an RFC 9457 problem
   * detail with its stable code; a 401 with its challenge, a 405 with Allow, an admin refusal
   * naming its parameter.
   */
  private static void problemDetailsOnEveryServer(HttpJson buyer) {
    String api = "http://127.0.0.1:" + stack.wiring.apiPort();
    HttpJson.Reply r = Problems.send(api + "/orders", "POST", "{\"request_key\":", "Content-Type", "application/json",
        "Authorization", "Bearer " + buyer.token());
    ev.check(Problems.is(r, 400, "MALFORMED_JSON"), "API, a broken JSON body → " + Problems.shown(r, 400, "MALFORMED_JSON"));
    r = Problems.send(api + "/orders", "GET", null);
    ev.check(Problems.is(r, 401, "UNAUTHENTICATED"), "API, no token → " + Problems.shown(r, 401, "UNAUTHENTICATED"));
    ev.equal("Bearer realm=\"flashsale\"", r.header("WWW-Authenticate"), "API, no token: the challenge");
    r = Problems.send(api + "/orders", "GET", null, "Authorization", "Bearer not-a-token");
    ev.check(Problems.is(r, 401, "UNAUTHENTICATED"), "API, a forged token → " + Problems.shown(r, 401, "UNAUTHENTICATED"));
    ev.equal("Bearer realm=\"flashsale\", error=\"invalid_token\"", r.header("WWW-Authenticate"),
        "API, a forged token: the challenge says invalid_token");
    r = buyer.get("/orders/ord-999999");
    ev.check(Problems.is(r, 404, "ORDER_NOT_FOUND"), "API, an unknown order → " + Problems.shown(r, 404, "ORDER_NOT_FOUND"));
    r = Problems.send(api + "/orders/ord-0001", "DELETE", null, "Authorization", "Bearer " + buyer.token());
    ev.check(Problems.is(r, 405, "METHOD_NOT_ALLOWED") && r.header("Allow") != null,
        "API, DELETE on an order → " + Problems.shown(r, 405, "METHOD_NOT_ALLOWED") + ", Allow: " + r.header("Allow"));
    r = Problems.send(api + "/nowhere", "GET", null, "Authorization", "Bearer " + buyer.token());
    ev.check(Problems.is(r, 404, "NOT_FOUND"), "API, an unknown path → " + Problems.shown(r, 404, "NOT_FOUND"));
    r = Problems.send(api + "/orders", "POST", "{}", "Content-Type", "text/plain", "Authorization", "Bearer " + buyer.token());
    ev.check(Problems.is(r, 415, "UNSUPPORTED_MEDIA_TYPE"),
        "API, a text/plain body → " + Problems.shown(r, 415, "UNSUPPORTED_MEDIA_TYPE"));

    r = stack.admin.post("/tasks/revoke?tenant=t1", null);
    ev.check(Problems.is(r, 400, "MISSING_PARAMETER") && "subject".equals(r.text("parameter")),
        "admin port, revoke without subject → " + Problems.shown(r, 400, "MISSING_PARAMETER") + ", parameter "
            + r.text("parameter"));

    String consumer = "http://127.0.0.1:" + stack.consumerPort() + "/events";
    String noEvent = "{\"event_id\": \"one\"}";
    r = Problems.send(consumer, "POST", noEvent, "Content-Type", "application/json", io.flashsale.domain.EventDelivery.HEADER,
        new io.flashsale.domain.EventDelivery(stack.wiring.deliverySecret()).sign(noEvent.getBytes(StandardCharsets.UTF_8)));
    ev.check(Problems.is(r, 400, "BAD_EVENT"), "fulfillment consumer, a signed body that is no event → "
        + Problems.shown(r, 400, "BAD_EVENT"));
    r = Problems.send(consumer, "GET", null);
    ev.check(Problems.is(r, 405, "METHOD_NOT_ALLOWED"),
        "fulfillment consumer, GET → " + Problems.shown(r, 405, "METHOD_NOT_ALLOWED"));
    forgedDeliveriesChangeNothing(consumer);
  }

  /**
   * The consumer reads only a relay's signed JSON: a page's text/plain post, an unsigned event and
   * one signed with another key are refused, and its tables stay as they were.
   */
  private static void forgedDeliveriesChangeNothing(String consumer) {
    String tables = "SELECT (SELECT count(*) FROM fulfillment.ful_inbox) * 1000000"
        + " + (SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment) * 1000"
        + " + (SELECT count(*) FROM fulfillment.ful_received)";
    long before = stack.sql.count(tables);
    String ship = "{\"event_id\":900000001,\"order_id\":\"ord-000000000001\",\"event_type\":\"ORDER_PAID\","
        + "\"order_version\":2147483647,\"payload\":\"{}\"}";
    HttpJson.Reply r = Problems.send(consumer, "POST", ship, "Content-Type", "text/plain");
    ev.check(Problems.is(r, 415, "UNSUPPORTED_MEDIA_TYPE"),
        "fulfillment consumer, an event as text/plain (a page can send it without a preflight) → "
            + Problems.shown(r, 415, "UNSUPPORTED_MEDIA_TYPE"));
    r = Problems.send(consumer, "POST", ship, "Content-Type", "application/json");
    ev.check(Problems.is(r, 401, "BAD_SIGNATURE"), "an unsigned event → " + Problems.shown(r, 401, "BAD_SIGNATURE"));
    r = Problems.send(consumer, "POST", ship, "Content-Type", "application/json", io.flashsale.domain.EventDelivery.HEADER,
        new io.flashsale.domain.EventDelivery("not-the-delivery-secret-0123456789abcdef")
            .sign(ship.getBytes(StandardCharsets.UTF_8)));
    ev.check(Problems.is(r, 401, "BAD_SIGNATURE"), "an event signed with another key → " + Problems.shown(r, 401, "BAD_SIGNATURE"));
    ev.equal(before, stack.sql.count(tables), "the forged deliveries changed nothing: no inbox row, no shipment, no arrival");
  }

  /** The least distance between the numbers of two successive ids. */
  private static long closest(List<String> orderIds) {
    long closest = Long.MAX_VALUE;
    for (int i = 1; i < orderIds.size(); i++) {
      closest = Math.min(closest, Math.abs(idNumber(orderIds.get(i)) - idNumber(orderIds.get(i - 1))));
    }
    return closest;
  }

  private static long idNumber(String orderId) {
    return Long.parseLong(orderId.substring("ord-".length()));
  }

  private static int callback(String body, String signature) {
    return stack.callback(body, signature).status();
  }

}
