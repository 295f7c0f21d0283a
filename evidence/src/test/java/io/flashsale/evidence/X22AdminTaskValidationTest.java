package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the admin tasks over real HTTP on the admin port. Bad parameters (not a number, a zero
 * price, a SKU name the API would refuse, a typo in a name, a missing price for a new SKU) get a
 * 400 problem detail (RFC 9457, application/problem+json) with a stable code and the parameter's
 * name, never a 500 with a database message; a
 * total below the units held or confirmed is 409 and changes nothing; omitted price and limit
 * keep the current values; a revoked principal is restored with the unrevoke task (with a new
 * login: its tokens from before the revocation stay refused). The door of
 * the local default's admin port: a task without X-Requested-By (what a web page in the
 * operator's browser would send) and any request whose Host is not a loopback name (a rebound DNS
 * name) are refused and change nothing.
 */
@Tag("engine-independent") // its claim is about the admin port's tasks, the same on either engine
class X22AdminTaskValidationTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("X-22", "admin tasks: problem details for bad parameters; unrevoke");

  private static final String SKU = "sku-x22";

  @Test
  void adminTasksRefuseBadParametersAndRestorePrincipals() throws Exception {
    HttpJson.Reply made = task("/tasks/sku?tenant=t1&sku=" + SKU + "&total=5&unit_price=1990&per_user_limit=2");
    ev.check(made.status() == 200 && made.raw().contains("remaining=5"), "new SKU: 200 " + made.raw().trim());

    HttpJson held = stack.api.login("t1", "user-2201");
    HttpJson paid = stack.api.login("t1", "user-2202");
    ev.equal(201, Buyers.create(held, "x22-held", SKU, 2).status(), "2 units held by an order");
    String paidId = Buyers.create(paid, "x22-paid", SKU, 1).text("order_id");
    ev.equal("PAID", Buyers.pay(paid, paidId).text("status"), "1 unit confirmed by a paid order");

    HttpJson.Reply below = task("/tasks/sku?tenant=t1&sku=" + SKU + "&total=2");
    ev.note("total 2 with 3 held/confirmed: " + below.status() + " " + below.raw().trim());
    refused(below, 409, "TOTAL_BELOW_HELD", "total", "total below the 3 units held or confirmed");
    ev.equal("5 2", row(), "the SKU is unchanged (total 5, remaining 2)");
    HttpJson.Reply exact = task("/tasks/sku?tenant=t1&sku=" + SKU + "&total=3");
    ev.check(exact.status() == 200 && exact.raw().contains("remaining=0"), "total 3 = held + confirmed: 200, remaining 0");

    String[][] bad = {
        {"total=ten", "total", "INVALID_PARAMETER"},
        {"total=-1", "total", "INVALID_PARAMETER"},
        {"total=99999999999999999999", "total", "INVALID_PARAMETER"},
        {"total=5&unit_price=0", "unit_price", "INVALID_PARAMETER"},
        {"total=5&unit_price=19.90", "unit_price", "INVALID_PARAMETER"},
        {"total=5&per_user_limit=0", "per_user_limit", "INVALID_PARAMETER"},
        {"total=5&per_user_limt=2", "per_user_limt", "UNKNOWN_PARAMETER"},
        {"total=5&total=6", "total", "INVALID_PARAMETER"},
        {"", "total", "MISSING_PARAMETER"},
    };
    for (String[] b : bad) {
      HttpJson.Reply r = task("/tasks/sku?tenant=t1&sku=" + SKU + (b[0].isEmpty() ? "" : "&" + b[0]));
      refused(r, 400, b[2], b[1], b[0].isEmpty() ? "no total" : b[0]);
    }
    ev.equal("3 0", row(), "none of the refused calls changed the SKU");

    for (String name : List.of("bad%20sku", "sku%27x22", "x".repeat(65), "sku%2Fx22")) {
      HttpJson.Reply r = task("/tasks/sku?tenant=t1&sku=" + name + "&total=5&unit_price=100&per_user_limit=1");
      refused(r, 400, "INVALID_PARAMETER", "sku", "SKU name " + (name.length() > 20 ? "of 65 characters" : name));
    }
    refused(task("/tasks/sku?tenant=t%201&sku=sku-x22-new&total=5&unit_price=100&per_user_limit=1"), 400,
        "INVALID_PARAMETER", "tenant", "tenant with a space");
    refused(task("/tasks/sku?tenant=t1&sku=sku-x22-new&total=5&per_user_limit=1"), 400, "MISSING_PARAMETER",
        "unit_price", "a new SKU without unit_price");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM sku"), "no SKU row stored by any refused call");

    HttpJson.Reply keep = task("/tasks/sku?tenant=t1&sku=" + SKU + "&total=10");
    ev.check(keep.status() == 200, "total only: 200 " + keep.raw().trim());
    ev.equal("1990 2", stack.sql.text("SELECT unit_price || ' ' || per_user_limit FROM sku WHERE sku = ?", SKU),
        "omitted unit_price and per_user_limit keep 1990 and 2");
    ev.equal("10 7", row(), "total 10, remaining 10 − 3");
    HttpJson.Reply price = task("/tasks/sku?tenant=t1&sku=" + SKU + "&total=10&unit_price=2500");
    ev.check(price.status() == 200 && price.raw().contains("unit_price=2500 per_user_limit=2"),
        "a new price alone keeps the limit: " + price.raw().trim());

    HttpResponse<String> raw = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + stack.adminPort() + "/tasks/sku?tenant=t1&sku=" + SKU + "&total=abc"))
        .header("X-Requested-By", "x22").POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    ev.check(raw.headers().firstValue("Content-Type").orElse("").startsWith("application/problem+json"),
        "the refusal is application/problem+json: " + raw.headers().firstValue("Content-Type").orElse("none"));

    // the admin port's own refusals are problem details too
    HttpJson.Reply unknownTask = task("/tasks/no-such-task");
    ev.check(Problems.is(unknownTask, 404, "NOT_FOUND"), "an unknown task → " + Problems.shown(unknownTask, 404, "NOT_FOUND"));
    HttpJson.Reply getTask = stack.admin.get("/tasks/sku");
    ev.check(Problems.is(getTask, 405, "METHOD_NOT_ALLOWED"),
        "GET on a task → " + Problems.shown(getTask, 405, "METHOD_NOT_ALLOWED"));

    // revoke, then restore
    HttpJson buyer = stack.api.login("t1", "user-2203");
    ev.equal(200, buyer.get("/orders").status(), "the buyer can list orders");
    ev.equal(200, task("/tasks/revoke?tenant=t1&subject=user-2203").status(), "revoke: 200");
    HttpJson.Reply revoked = buyer.get("/orders");
    ev.check(Problems.is(revoked, 403, "REVOKED"), "revoked: " + Problems.shown(revoked, 403, "REVOKED"));
    HttpJson.Reply restored = task("/tasks/unrevoke?tenant=t1&subject=user-2203");
    ev.check(restored.status() == 200 && restored.raw().contains("unrevoked t1/user-2203"), "unrevoke: 200");
    HttpJson.Reply stale = buyer.get("/orders");
    ev.check(Problems.is(stale, 401, "SESSION_ENDED"),
        "the token from before the revocation stays refused: 401 SESSION_ENDED (" + stale.status() + ")");
    HttpJson again = stack.api.login("t1", "user-2203");
    ev.equal(200, again.get("/orders").status(), "a new login works again");
    ev.equal(201, Buyers.create(again, "x22-after", SKU, 1).status(), "and it can order again");
    refused(task("/tasks/unrevoke?tenant=t1&subject=user-nobody"), 404, "PRINCIPAL_NOT_FOUND", "subject",
        "unrevoke of an unknown principal");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM principals WHERE subject = 'user-nobody'"),
        "the unknown principal was not stored");
    refused(task("/tasks/revoke?tenant=t1&subject=user%2F1"), 400, "INVALID_PARAMETER", "subject",
        "revoke with a subject the API would refuse");
    refused(task("/tasks/revoke?tenant=t1"), 400, "MISSING_PARAMETER", "subject", "revoke without subject");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM principals WHERE revoked"), "no principal left revoked");

    refused(task("/tasks/reconcile?repair=yes"), 400, "INVALID_PARAMETER", "repair", "reconcile repair=yes");
    refused(task("/tasks/reconcile?format=xml"), 400, "INVALID_PARAMETER", "format", "reconcile format=xml");
    stack.checkReconcileClean(ev, "reconcile clean after all of it");
  }

  private static HttpJson.Reply task(String path) {
    return stack.admin.post(path, null);
  }

  private static String row() {
    return stack.sql.text("SELECT total || ' ' || remaining FROM sku WHERE tenant = 't1' AND sku = ?", SKU);
  }

  @Test
  void theLocalAdminPortAnswersOnlyItsOwnOperator() throws Exception {
    ev.check(task("/tasks/sku?tenant=t1&sku=sku-x22-door&total=5&unit_price=100&per_user_limit=1").status() == 200,
        "the SKU is made with the header");
    HttpResponse<String> noHeader = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(
        "http://127.0.0.1:" + stack.adminPort() + "/tasks/sku?tenant=t1&sku=sku-x22-door&total=0"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    HttpJson.Reply refusal = new HttpJson.Reply(noHeader.statusCode(), HttpJson.JSON.readTree(noHeader.body()),
        noHeader.body(), noHeader.headers());
    ev.check(Problems.is(refusal, 400, "REQUESTED_BY_REQUIRED"),
        "a task without X-Requested-By → " + Problems.shown(refusal, 400, "REQUESTED_BY_REQUIRED"));
    // however the path is spelt: Jetty decodes and normalises it before it picks the task
    for (String path : List.of("/%74asks/sku", "/./tasks/sku", "/x/../tasks/sku", "/tasks;x/sku")) {
      String answer = rawRequest("POST " + path + "?tenant=t1&sku=sku-x22-door&total=0 HTTP/1.1",
          "127.0.0.1:" + stack.adminPort(), false);
      ev.check(answer.startsWith("HTTP/1.1 400") && answer.contains("REQUESTED_BY_REQUIRED"),
          "POST " + path + " without X-Requested-By → 400: " + answer.lines().findFirst().orElse(""));
    }
    ev.equal(5L, stack.sql.count("SELECT total FROM sku WHERE sku = 'sku-x22-door'"), "the total stays 5");

    for (String host : List.of("evil.example", "evil.example:" + stack.adminPort(), "127.0.0.1.evil.example")) {
      String answer = rawRequest("POST /tasks/reconcile HTTP/1.1", host);
      ev.check(answer.startsWith("HTTP/1.1 403") && answer.contains("\"code\":\"ADMIN_HOST_REFUSED\"")
              && answer.toLowerCase(java.util.Locale.ROOT).contains("content-type: application/problem+json"),
          "POST /tasks/reconcile with Host: " + host + " → 403 ADMIN_HOST_REFUSED: " + answer.lines().findFirst().orElse(""));
      String metrics = rawRequest("GET /metrics/prometheus HTTP/1.1", host);
      ev.check(metrics.startsWith("HTTP/1.1 403"), "GET /metrics/prometheus with Host: " + host + " → 403");
    }
    ev.check(rawRequest("GET /ping HTTP/1.1", "localhost:" + stack.adminPort()).startsWith("HTTP/1.1 200"),
        "Host: localhost is the operator's");
  }

  private static String rawRequest(String requestLine, String host) throws Exception {
    return rawRequest(requestLine, host, true);
  }

  /**
   * One request over a socket, its path and Host as given (the JDK's client would normalise the
   * one and set the other), with or without X-Requested-By.
   */
  private static String rawRequest(String requestLine, String host, boolean requestedBy) throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", stack.adminPort())) {
      socket.setSoTimeout(10_000);
      String request = requestLine + "\r\nHost: " + host + (requestedBy ? "\r\nX-Requested-By: x22" : "")
          + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  private static void refused(HttpJson.Reply r, int status, String code, String parameter, String what) {
    ev.check(Problems.is(r, status, code) && parameter.equals(r.text("parameter")),
        what + " → " + Problems.shown(r, status, code) + ", parameter " + r.text("parameter"));
    ev.check(!r.raw().contains("Exception") && !r.raw().contains("\tat ") && !r.raw().contains("ERROR:")
        && !r.raw().contains("violates"), what + ": no stack trace or database message on the wire");
  }
}
