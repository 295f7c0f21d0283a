package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-01 (session cookie part): the token also works as an HttpOnly, SameSite=Strict session
 * cookie. Reads need only the cookie; an unsafe request authenticated by the cookie also needs the
 * session's CSRF token, or it is 403 and changes nothing. A tampered cookie is 401; another
 * subject's order is 404 with a cookie too; bearer requests need no CSRF header.
 *
 * <p>Isolation: another subject of the same tenant, the same subject name in another tenant, and
 * another subject in another tenant each try to read, cancel, pay and stream the owner's order
 * (bearer, and cookie with their own valid CSRF token) and export their CSV. Every order call is
 * 404 ORDER_NOT_FOUND as a missing order (no existence oracle), their CSV never lists the order, and nothing moved: status, version, timeline,
 * stock, reservation, charges. The owner can still do all of it afterwards.
 */
@Tag("engine-independent") // its claim is about the session cookie and tenant isolation at the API, the same on either engine
class Cap01CookieSessionTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("CAP-01", "session cookie + CSRF; isolation across subjects and tenants");

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void cookieSessions() throws Exception {
    stack.sku("sku-cap01", 5, 3);
    HttpResponse<String> login = send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-cap01\"}", null, null);
    String setCookie = login.headers().firstValue("Set-Cookie").orElse("");
    ev.note("Set-Cookie: " + setCookie.replaceAll("=[^;]{20,}", "=<token>"));
    ev.check(setCookie.startsWith("flashsale_session=") && setCookie.contains("HttpOnly")
        && setCookie.toLowerCase().contains("samesite=strict"), "login sets an HttpOnly, SameSite=Strict session cookie");
    JsonNode session = JSON.readTree(login.body());
    String cookie = "flashsale_session=" + session.path("token").asText();
    String csrf = session.path("csrf_token").asText();
    String otherCookie = "flashsale_session=" + JSON.readTree(send("POST", "/session",
        "{\"tenant\":\"t1\",\"subject\":\"user-cap01b\"}", null, null).body()).path("token").asText();

    String order = "{\"request_key\":\"cap01-1\",\"sku\":\"sku-cap01\",\"quantity\":1}";
    ev.equal(403, send("POST", "/orders", order, cookie, null).statusCode(), "cookie POST without CSRF header → 403");
    ev.equal(403, send("POST", "/orders", order, cookie, "forged").statusCode(), "cookie POST with a wrong CSRF token → 403");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders WHERE subject = 'user-cap01'"), "refused POSTs created nothing");
    HttpResponse<String> created = send("POST", "/orders", order, cookie, csrf);
    ev.equal(201, created.statusCode(), "cookie POST with the session's CSRF token → 201");
    String id = JSON.readTree(created.body()).path("order_id").asText();

    ev.equal(200, send("GET", "/orders/" + id, null, cookie, null).statusCode(), "cookie GET needs no CSRF → 200");
    ev.equal(200, send("GET", "/orders/export.csv", null, cookie, null).statusCode(), "cookie CSV export → 200");
    String tampered = cookie.substring(0, cookie.length() - 2) + (cookie.endsWith("A") ? "BB" : "AA");
    ev.equal(401, send("GET", "/orders/" + id, null, tampered, null).statusCode(), "tampered cookie → 401");
    ev.equal(404, send("GET", "/orders/" + id, null, otherCookie, null).statusCode(), "another subject's cookie → 404, as a missing order");
    ev.equal(403, send("POST", "/orders/" + id + "/cancel", null, cookie, null).statusCode(), "cookie cancel without CSRF → 403");
    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "and the order was not cancelled");
    ev.equal(200, send("POST", "/orders/" + id + "/cancel", null, cookie, csrf).statusCode(), "cookie cancel with CSRF → 200");
    ev.equal(201, stack.api.as(session.path("token").asText()).post("/orders",
        Map.of("request_key", "cap01-2", "sku", "sku-cap01", "quantity", 1)).status(), "bearer POST needs no CSRF → 201");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  @Test
  void othersCannotReadCancelStreamOrExportAnOrder() throws Exception {
    stack.sku("sku-cap01-iso", 5, 3);
    HttpJson owner = stack.api.login("t1", "user-cap01-own");
    String id = Buyers.create(owner, "cap01-iso-1", "sku-cap01-iso", 2).text("order_id");
    String before = snapshot(id);
    ev.note("owner's order " + id + ": " + before);

    // {label, tenant, subject}: the same tenant, the same subject name elsewhere, a stranger elsewhere
    String[][] intruders = {
        {"another subject, same tenant", "t1", "user-cap01-x"},
        {"same subject name, another tenant", "t2", "user-cap01-own"},
        {"another subject, another tenant", "t2", "user-cap01-y"}};
    for (String[] who : intruders) {
      String label = who[0];
      JsonNode session = JSON.readTree(send("POST", "/session",
          JSON.writeValueAsString(Map.of("tenant", who[1], "subject", who[2])), null, null).body());
      String token = session.path("token").asText();
      String cookie = "flashsale_session=" + token;
      String csrf = session.path("csrf_token").asText();
      HttpJson bearer = stack.api.as(token);

      notTheirs(bearer.get("/orders/" + id), label + ": GET");
      notTheirs(Buyers.cancel(bearer, id), label + ": cancel (bearer)");
      notTheirs(Buyers.pay(bearer, id), label + ": pay (bearer)");
      notTheirs(reply(send("POST", "/orders/" + id + "/cancel", null, cookie, csrf)),
          label + ": cancel (cookie with its own CSRF token)");
      notTheirs(reply(sendAccepting("/orders/" + id + "/events", "text/event-stream", "Bearer " + token, null)),
          label + ": event stream (bearer)");
      notTheirs(reply(sendAccepting("/orders/" + id + "/events", "text/event-stream", null, cookie)),
          label + ": event stream (cookie)");
      for (String[] auth : new String[][] {{"Bearer " + token, null}, {null, cookie}}) {
        HttpResponse<String> csv = sendAccepting("/orders/export.csv", "text/csv", auth[0], auth[1]);
        ev.check(csv.statusCode() == 200 && !csv.body().contains(id) && csv.body().strip().lines().count() == 1,
            label + ": CSV export (" + (auth[0] != null ? "bearer" : "cookie") + ") is 200 with a header and none"
                + " of the owner's rows (" + csv.statusCode() + ", " + csv.body().strip().lines().count() + " lines)");
      }
      ev.equal(before, snapshot(id), label + ": nothing changed");
    }
    ev.equal(0, Buyers.chargeRequests(stack.channel, id), "no charge reached the channel");

    // the same calls by the owner go through: the refusals were about who, not what
    ev.equal(200, owner.get("/orders/" + id).status(), "owner: GET → 200");
    try (SseClient stream = SseClient.open(stack.wiring.apiPort(), "/orders/" + id + "/events", owner.token(), null)) {
      ev.equal(200, stream.status(), "owner: event stream → 200");
    }
    ev.check(sendAccepting("/orders/export.csv", "text/csv", "Bearer " + owner.token(), null).body().contains(id),
        "owner: the CSV lists the order");
    HttpJson.Reply cancelled = Buyers.cancel(owner, id);
    ev.check(cancelled.status() == 200 && "CANCELLED".equals(cancelled.text("status")), "owner: cancel → 200 CANCELLED");
    ev.equal(5, stack.sql.remaining("sku-cap01-iso"), "owner's cancel gave the 2 units back");
    stack.checkReconcileClean(ev, "reconcile clean after the isolation checks");
  }

  /** Another's order answers as a missing one: 404 ORDER_NOT_FOUND, no existence oracle. */
  private static void notTheirs(HttpJson.Reply r, String what) {
    ev.check(r.status() == 404 && "ORDER_NOT_FOUND".equals(r.text("code")),
        what + " → 404 ORDER_NOT_FOUND (" + r.status() + " " + r.text("code") + ")");
  }

  private static HttpJson.Reply reply(HttpResponse<String> r) {
    JsonNode body;
    try {
      body = JSON.readTree(r.body());
    } catch (java.io.IOException e) {
      body = null;
    }
    return new HttpJson.Reply(r.statusCode(), body, r.body());
  }

  /** Status, version, timeline, reservation and the SKU's stock of one order, as one comparable line. */
  private static String snapshot(String id) {
    return stack.sql.text("SELECT o.status || ' v' || o.version || ' transitions=' || "
        + "(SELECT count(*) FROM order_transition t WHERE t.order_id = o.order_id) || ' reservation=' || "
        + "(SELECT r.status FROM reservation r WHERE r.reservation_key = o.reservation_key) || ' remaining=' || "
        + "(SELECT s.remaining FROM sku s WHERE s.tenant = o.tenant AND s.sku = o.sku) || ' notices=' || "
        + "(SELECT count(*) FROM payment_notification n WHERE n.merchant_order = o.order_id) || ' events=' || "
        + "(SELECT count(*) FROM outbox e WHERE e.order_id = o.order_id) FROM orders o WHERE o.order_id = ?", id);
  }

  /** A GET with an Accept header, authenticated by a bearer header or a cookie. */
  private HttpResponse<String> sendAccepting(String path, String accept, String authorization, String cookie)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + path))
        .header("Accept", accept).timeout(java.time.Duration.ofSeconds(30)).GET();
    if (authorization != null) b.header("Authorization", authorization);
    if (cookie != null) b.header("Cookie", cookie);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> send(String method, String path, String body, String cookie, String csrf) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    Map<String, String> headers = new LinkedHashMap<>();
    if (body != null) headers.put("Content-Type", "application/json");
    if (cookie != null) headers.put("Cookie", cookie);
    if (csrf != null) headers.put("X-CSRF-Token", csrf);
    headers.forEach(b::header);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
