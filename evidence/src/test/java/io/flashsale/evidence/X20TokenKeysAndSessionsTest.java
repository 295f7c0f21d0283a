package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.api.auth.TokenService;
import io.flashsale.launcher.cli.HttpJson;
import java.io.FileInputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * session tokens carry a key id and the service verifies with every configured key. A key is
 * rotated in two restarts without logging anyone out (k2 added and signing: k1's sessions and
 * their CSRF tokens still work; k1 removed: its tokens are 401). An event stream ends when the
 * token that opened it expires. A forged or expired cookie is 401 even on a POST without CSRF
 * header (the cookie is checked before the CSRF token). The session cookie is Secure when the
 * service is served over TLS (an HTTPS connector with a certificate made here), not over plain
 * HTTP. Tokens carry an issued-at time and an id: a logout ends every token of its principal
 * issued until then and their open streams; a revocation refuses them for good, so an unrevoke
 * revives none; a key retired at run time (admin task) ends the streams of its tokens at once.
 */
@Tag("engine-independent") // its claim is about session tokens and their keys, the same on either engine
class X20TokenKeysAndSessionsTest {
  private static final String K1 = "x20-key-one-0123456789abcdef0123456789";
  private static final String K2 = "x20-key-two-0123456789abcdef0123456789";
  private static final String PASSWORD = "x20-keystore-pass";
  @RegisterExtension static final Stack stack = new Stack().with("auth.keys.k1", K1);
  @RegisterExtension static final Evidence ev = new Evidence("X-20",
      "token keys: rotation without logout, logout / revoke / key retirement end tokens and streams, SSE ends at expiry,"
          + " forged cookie 401, Secure cookie over TLS");

  private HttpClient http = HttpClient.newHttpClient();
  private String base;

  @Test
  void keysSessionsAndCookies() throws Exception {
    stack.sku("sku-x20", 50, 50);
    int port = stack.wiring.apiPort();
    base = "http://127.0.0.1:" + port;

    // phase 1: one key, k1, over plain HTTP
    HttpResponse<String> login = send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-2001\"}", null, null);
    JsonNode session = HttpJson.JSON.readTree(login.body());
    String t1 = session.path("token").asText();
    String csrf1 = session.path("csrf_token").asText();
    String setCookie = login.headers().firstValue("Set-Cookie").orElse("");
    ev.note("plain HTTP Set-Cookie: " + setCookie.replaceAll("=[^;]{20,}", "=<token>"));
    ev.check(t1.startsWith("k1."), "the token names its key: k1.…");
    ev.check(setCookie.contains("HttpOnly") && !setCookie.contains("Secure"), "over plain HTTP the cookie is not Secure");
    HttpJson owner = stack.api.as(t1);
    String id = Buyers.create(owner, "x20-1", "sku-x20", 1).text("order_id");
    ev.check(id != null, "an order to look at: " + id);
    // a session and an order are nobody's to keep: no shared proxy or browser cache holds them
    ev.equal("no-store", login.headers().firstValue("Cache-Control").orElse("(none)"), "the login answer: Cache-Control");
    ev.equal("no-store", owner.get("/orders/" + id).header("Cache-Control"), "an order read: Cache-Control");

    // a forged or expired cookie: 401 even without the CSRF header (was 403 CSRF), nothing created
    int at = t1.length() - 10;
    String forged = t1.substring(0, at) + (t1.charAt(at) == 'A' ? 'B' : 'A') + t1.substring(at + 1);
    TokenService mint = new TokenService(Map.of("k1", K1), null, 3600, Clock.systemUTC());
    long now = System.currentTimeMillis() / 1000;
    String expired = mint.issue("t1", "user-2001", now - 5);
    String order = "{\"request_key\":\"x20-cookie\",\"sku\":\"sku-x20\",\"quantity\":1}";
    HttpResponse<String> r = send("POST", "/orders", order, "flashsale_session=" + forged, null);
    ev.check(r.statusCode() == 401 && r.body().contains("\"UNAUTHENTICATED\""), "forged cookie POST, no CSRF header → 401 ("
        + r.body() + ")");
    r = send("POST", "/orders", order, "flashsale_session=" + expired, null);
    ev.check(r.statusCode() == 401 && r.body().contains("\"UNAUTHENTICATED\""), "expired cookie POST, no CSRF header → 401");
    r = send("POST", "/orders", order, "flashsale_session=" + t1, null);
    ev.check(r.statusCode() == 403 && r.body().contains("\"CSRF\""), "a valid cookie without CSRF header is still 403 CSRF (" + r.statusCode() + " " + r.body() + ", token " + t1 + ")");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM orders WHERE request_key = 'x20-cookie'"), "nothing created");

    // the event stream ends when its token expires; one opened with a long-lived token stays open
    String shortLived = mint.issue("t1", "user-2001", now + 3);
    try (SseClient longer = SseClient.open(port, "/orders/" + id + "/events", t1, null);
         SseClient brief = SseClient.open(port, "/orders/" + id + "/events", shortLived, null)) {
      ev.check(brief.status() == 200 && longer.status() == 200, "two streams open (3 s token, 1 h token)");
      String first = brief.nextEvent(5_000);
      ev.check(first != null && first.contains("\"to_status\":\"CREATED\""), "the short-lived stream shows CREATED");
      longer.nextEvent(5_000);
      long opened = System.currentTimeMillis();
      String end = brief.nextEvent(10_000);
      ev.note("after " + (System.currentTimeMillis() - opened) + " ms the short-lived stream got: "
          + (end == null ? null : end.replace('\n', ' ')));
      ev.check(end != null && end.startsWith("event: expired") && end.contains("TOKEN_EXPIRED"),
          "the short-lived stream gets an expired event");
      ev.check(brief.ended(5_000), "and is closed by the server");
      ev.check(!longer.ended(1_500), "the stream of the 1 h token is still open");
    }

    // logout: every token of the principal issued until then is refused, and its open streams end
    HttpResponse<String> loginA = send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-2002\"}", null, null);
    String a = HttpJson.JSON.readTree(loginA.body()).path("token").asText();
    String csrfA = HttpJson.JSON.readTree(loginA.body()).path("csrf_token").asText();
    Thread.sleep(5); // two logins in one millisecond are both before a logout in it; here they are apart
    String b = HttpJson.JSON.readTree(send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-2002\"}", null, null)
        .body()).path("token").asText();
    String idA = Buyers.create(stack.api.as(a), "x20-logout", "sku-x20", 1).text("order_id");
    ev.equal(403, send("POST", "/session/logout", null, "flashsale_session=" + a, null).statusCode(),
        "a cookie logout without its CSRF token → 403");
    try (SseClient open = SseClient.open(port, "/orders/" + idA + "/events", a, null)) {
      ev.equal(200, open.status(), "a stream of the first session opens");
      open.nextEvent(5_000);
      HttpResponse<String> out = send("POST", "/session/logout", null, "flashsale_session=" + a, csrfA);
      String cleared = out.headers().firstValue("Set-Cookie").orElse("");
      ev.check(out.statusCode() == 204 && cleared.contains("Max-Age=0"), "POST /session/logout (cookie, CSRF) → 204 and the"
          + " cookie expired (" + out.statusCode() + ", " + cleared.replaceAll("=[^;]{20,}", "=<token>") + ")");
      String ended = open.nextEvent(5_000);
      ev.check(ended != null && ended.startsWith("event: revoked") && ended.contains("SESSION_ENDED"),
          "the open stream ends with event revoked, SESSION_ENDED (" + (ended == null ? null : ended.replace('\n', ' ')) + ")");
      ev.check(open.ended(5_000), "and is closed by the server");
    }
    for (String token : new String[] {a, b}) {
      HttpResponse<String> gone = send("GET", "/orders/" + idA, null, null, null, token);
      ev.check(gone.statusCode() == 401 && gone.body().contains("SESSION_ENDED")
              && gone.headers().firstValue("WWW-Authenticate").orElse("").contains("invalid_token"),
          "a token issued before the logout (" + (token == a ? "the one logged out" : "another session") + ") → 401 SESSION_ENDED");
    }
    String c = HttpJson.JSON.readTree(send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-2002\"}", null, null)
        .body()).path("token").asText();
    ev.equal(200, send("GET", "/orders/" + idA, null, null, null, c).statusCode(), "a login after the logout works at once");

    // revoke, then unrevoke: the tokens from before the revocation stay refused
    String before = HttpJson.JSON.readTree(send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-2003\"}", null, null)
        .body()).path("token").asText();
    String idR = Buyers.create(stack.api.as(before), "x20-revoke", "sku-x20", 1).text("order_id");
    ev.equal(200, stack.admin.post("/tasks/revoke?tenant=t1&subject=user-2003", null).status(), "revoke user-2003");
    ev.equal(403, send("GET", "/orders/" + idR, null, null, null, before).statusCode(), "revoked: its token → 403 REVOKED");
    ev.equal(200, stack.admin.post("/tasks/unrevoke?tenant=t1&subject=user-2003", null).status(), "unrevoke user-2003");
    HttpResponse<String> stale = send("GET", "/orders/" + idR, null, null, null, before);
    ev.check(stale.statusCode() == 401 && stale.body().contains("SESSION_ENDED"),
        "after the unrevoke the token from before the revocation → 401 SESSION_ENDED (" + stale.statusCode() + ")");
    String fresh = HttpJson.JSON.readTree(send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-2003\"}", null, null)
        .body()).path("token").asText();
    ev.equal(200, send("GET", "/orders/" + idR, null, null, null, fresh).statusCode(), "a token issued after it works");

    // phase 2: k2 added and signing, and served over TLS
    Path keystore = keystore();
    stack.stop();
    stack.with("auth.keys.k2", K2).with("auth.signingKeyId", "k2")
        .with("server.applicationConnectors[0].type", "https")
        .with("server.applicationConnectors[0].keyStorePath", keystore.toString())
        .with("server.applicationConnectors[0].keyStorePassword", PASSWORD)
        .with("server.applicationConnectors[0].keyStoreType", "PKCS12");
    stack.start();
    http = HttpClient.newBuilder().sslContext(trusting(keystore)).build();
    base = "https://127.0.0.1:" + port;
    ev.note("restarted with keys k1, k2 (signing k2) on an HTTPS connector");
    ev.equal(200, send("GET", "/orders/" + id, null, null, null, t1).statusCode(),
        "k1's bearer token still works after the rotation: nobody logged out");
    HttpResponse<String> cookiePost = send("POST", "/orders", "{\"request_key\":\"x20-2\",\"sku\":\"sku-x20\",\"quantity\":1}",
        "flashsale_session=" + t1, csrf1);
    ev.equal(201, cookiePost.statusCode(), "k1's cookie with its CSRF token still creates (" + cookiePost.body() + ")");
    HttpResponse<String> tlsLogin = send("POST", "/session", "{\"tenant\":\"t1\",\"subject\":\"user-2001\"}", null, null);
    String t2 = HttpJson.JSON.readTree(tlsLogin.body()).path("token").asText();
    String tlsCookie = tlsLogin.headers().firstValue("Set-Cookie").orElse("");
    ev.note("TLS Set-Cookie: " + tlsCookie.replaceAll("=[^;]{20,}", "=<token>"));
    ev.check(tlsCookie.contains("Secure") && tlsCookie.contains("HttpOnly"), "over TLS the session cookie is Secure");
    ev.check(t2.startsWith("k2."), "new tokens are signed with k2");
    ev.equal(200, send("GET", "/orders/" + id, null, null, null, t2).statusCode(), "k2's token works");

    // a leaked k1 retired at run time: its tokens and their open streams end now, before any restart
    try (SseClient open = SseClient.open(base, http, "/orders/" + id + "/events", t1, null)) {
      ev.equal(200, open.status(), "a stream of k1's token opens");
      open.nextEvent(5_000);
      ev.equal(409, stack.admin.post("/tasks/retire-token-key?keyId=k2", null).status(),
          "retire-token-key k2 → 409 SIGNING_KEY (it signs new tokens)");
      ev.equal(404, stack.admin.post("/tasks/retire-token-key?keyId=k9", null).status(), "retire-token-key k9 → 404 UNKNOWN_KEY");
      ev.equal(200, stack.admin.post("/tasks/retire-token-key?keyId=k1", null).status(), "retire-token-key k1 → 200");
      String ended = open.nextEvent(5_000);
      ev.check(ended != null && ended.startsWith("event: revoked") && ended.contains("KEY_RETIRED"),
          "the stream of k1's token ends with event revoked, KEY_RETIRED");
    }
    ev.equal(401, send("GET", "/orders/" + id, null, null, null, t1).statusCode(), "k1's token → 401 once k1 is retired");
    ev.equal(200, send("GET", "/orders/" + id, null, null, null, t2).statusCode(), "k2's token still works");

    // phase 3: k1 retired
    stack.stop();
    stack.without("auth.keys.k1");
    stack.start();
    ev.note("restarted with key k2 only");
    HttpResponse<String> retired = send("GET", "/orders/" + id, null, null, null, t1);
    ev.check(retired.statusCode() == 401 && retired.body().contains("\"UNAUTHENTICATED\""),
        "k1's token → 401 once k1 is removed");
    ev.equal(200, send("GET", "/orders/" + id, null, null, null, t2).statusCode(), "k2's token still works");
    ev.equal(401, send("POST", "/orders/" + id + "/cancel", null, "flashsale_session=" + t1, csrf1).statusCode(),
        "k1's cookie → 401, even with its CSRF token");
    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id), "and the order was not cancelled");
  }

  private HttpResponse<String> send(String method, String path, String body, String cookie, String csrf) throws Exception {
    return send(method, path, body, cookie, csrf, null);
  }

  private HttpResponse<String> send(String method, String path, String body, String cookie, String csrf, String bearer)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    Map<String, String> headers = new LinkedHashMap<>();
    if (body != null) headers.put("Content-Type", "application/json");
    if (cookie != null) headers.put("Cookie", cookie);
    if (csrf != null) headers.put("X-CSRF-Token", csrf);
    if (bearer != null) headers.put("Authorization", "Bearer " + bearer);
    headers.forEach(b::header);
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A self-signed certificate for 127.0.0.1, made with the JDK's keytool in the stack's data folder. */
  private static Path keystore() throws Exception {
    Path file = stack.dataDir().resolve("x20-tls.p12");
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
        "-genkeypair", "-alias", "x20", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=127.0.0.1",
        "-ext", "san=ip:127.0.0.1,dns:localhost", "-validity", "2", "-storetype", "PKCS12",
        "-keystore", file.toString(), "-storepass", PASSWORD, "-keypass", PASSWORD)
        .redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) throw new IllegalStateException("keytool: " + out);
    return file;
  }

  /** A client that trusts exactly that certificate. */
  private static SSLContext trusting(Path keystore) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = new FileInputStream(keystore.toFile())) {
      ks.load(in, PASSWORD.toCharArray());
    }
    TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }
}
