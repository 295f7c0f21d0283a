package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-01 (session cookie part): the token also works as an HttpOnly, SameSite=Strict session
 * cookie. Reads need only the cookie; an unsafe request authenticated by the cookie also needs the
 * session's CSRF token, or it is 403 and changes nothing. A tampered cookie is 401; another
 * subject's order is 403 with a cookie too; bearer requests need no CSRF header.
 */
class Cap01CookieSessionTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("CAP-01", "session cookie + CSRF; identity matrix with cookies");

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
    ev.equal(403, send("GET", "/orders/" + id, null, otherCookie, null).statusCode(), "another subject's cookie → 403");
    ev.equal(403, send("POST", "/orders/" + id + "/cancel", null, cookie, null).statusCode(), "cookie cancel without CSRF → 403");
    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "and the order was not cancelled");
    ev.equal(200, send("POST", "/orders/" + id + "/cancel", null, cookie, csrf).statusCode(), "cookie cancel with CSRF → 200");
    ev.equal(201, stack.api.as(session.path("token").asText()).post("/orders",
        Map.of("request_key", "cap01-2", "sku", "sku-cap01", "quantity", 1)).status(), "bearer POST needs no CSRF → 201");
    stack.checkReconcileClean(ev, "reconcile clean");
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
