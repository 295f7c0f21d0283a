package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.launcher.cli.HttpJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * one trace per order. The API (this JVM, no worker) and the worker (a child process:
 * workflows and activities) both trace, exporting to their logs. A buyer's client sends one W3C
 * trace context with its create and its pay; every span of the order joins that trace, each under
 * its cause: the API's server span of the pay request, the client's update span, the worker's
 * update handler, the charge activity's schedule and run spans, the channel call's client span,
 * and the channel receives that span as its traceparent. The create's server span parents the
 * update-with-start span, which parents the workflow run. The trace id is in the API's and the
 * worker's log lines about the order, beside its order id.
 */
class X31OneTraceTest {
  // the API process hosts no worker; a short late-notice window: the run (and its span) ends within the experiment
  @RegisterExtension static final Stack stack = new Stack().with("worker", false).with("orders.lateNoticeWindow", "1s");
  @RegisterExtension static final Evidence ev = new Evidence("X-31",
      "one trace: API request → update → workflow → charge activity → channel call, across API and worker processes");

  private static final String SKU = "sku-x31";
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Pattern SPAN = Pattern.compile(
      "span trace=([0-9a-f]{32}) id=([0-9a-f]{16}) parent=([0-9a-f]{16}|none) service=(\\S+) kind=(\\w+) ms=(\\d+) "
          + "status=(\\w+) name=\"([^\"]*)\"");

  record Span(String trace, String id, String parent, String service, String kind, String name, String line) {}

  @Test
  void onePaidOrderIsOneTrace() throws Exception {
    String format = LogCapture.configuredLogFormat();
    ev.check(format.contains("%X{trace_id}"), "the service's log format shows the MDC key trace_id");
    stack.sku(SKU, 5, 3);
    Map<String, String> props = new LinkedHashMap<>(stack.workerProperties());
    props.put("dw.workerWorkflows", "true"); // the child hosts the workflow too: the whole order runs there
    try (ChildJvm worker = ChildJvm.start("x31-worker", props, "worker", "embedded.yml");
        LogCapture api = LogCapture.start(format, "x31-capture")) {
      worker.awaitLog("worker polling", 60_000);
      ev.check(worker.logContains("tracing as flashsale-worker: exporter log"), "the worker traces as flashsale-worker");
      HttpJson buyer = stack.api.login("t1", "user-3101");

      String trace = hex(16);
      String createParent = hex(8);
      String payParent = hex(8);
      ev.note("the client's trace " + trace + ": create sent as child of " + createParent + ", pay of " + payParent);
      JsonNode created = post(buyer, "/orders", "{\"request_key\":\"x31\",\"sku\":\"" + SKU + "\",\"quantity\":1}",
          traceparent(trace, createParent));
      String id = created.path("order_id").asText();
      ev.equal("CREATED", created.path("outcome").asText(), "order " + id + " created");
      JsonNode paid = post(buyer, "/orders/" + id + "/pay", null, traceparent(trace, payParent));
      ev.equal("PAID", paid.path("status").asText(), "order " + id + " PAID");

      // the run's span ends with the run; each log is written in batches (docs/DESIGN.md §Tracing),
      // so the API's pay span is awaited too
      stack.awaitTrue(() -> spans(logLines(worker)).stream().anyMatch(s -> s.name().equals("RunWorkflow:OrderWorkflow")
          && s.trace().equals(trace)), 60_000, "the workflow run's span never reached the worker's log");
      stack.awaitTrue(() -> spans(api.lines()).stream().anyMatch(s -> s.name().equals("POST /orders/{id}/pay")
          && s.trace().equals(trace)), 30_000, "the pay request's span never reached the API's log");

      List<String> apiLines = api.lines();
      List<String> workerLines = logLines(worker);
      List<Span> all = new ArrayList<>(spans(apiLines));
      all.addAll(spans(workerLines));
      List<Span> inTrace = all.stream().filter(s -> s.trace().equals(trace)).toList();
      inTrace.forEach(s -> ev.note("span " + s.line()));

      // the pay request: API → update → workflow's handler → charge activity → channel
      Span payServer = one(inTrace, "POST /orders/{id}/pay", "flashsale-api");
      ev.check(payServer.kind().equals("SERVER") && payServer.parent().equals(payParent),
          "the pay request's server span continues the client's traceparent (parent " + payParent + ")");
      Span payUpdate = one(inTrace, "UpdateWorkflow:pay", "flashsale-api");
      ev.equal(payServer.id(), payUpdate.parent(), "the client's update span is a child of the pay request's span");
      // a run evicted from the worker's cache (a completion refused as UnhandledCommand when the
      // channel's notice arrives as the run ends) replays its history on its next task, and the
      // SDK's tracing records a handler's span again on replay: the same handler under the same
      // parent, whatever the count; the outbound calls are not recorded again
      List<Span> handles = inTrace.stream()
          .filter(s -> s.name().equals("HandleUpdate:pay") && s.service().equals("flashsale-worker")).toList();
      ev.check(!handles.isEmpty(), "the worker's pay handler span is in the trace");
      ev.check(handles.stream().allMatch(h -> h.parent().equals(payUpdate.id())),
          "the worker's update handler span is a child of the client's update span");
      if (handles.size() > 1) {
        ev.note("the pay handler's span is there " + handles.size() + " times: the run was replayed on the worker");
      }
      Span schedule = one(inTrace, "StartActivity:Charge", "flashsale-worker");
      ev.check(handles.stream().anyMatch(h -> h.id().equals(schedule.parent())),
          "the charge is scheduled under the update handler");
      Span run = one(inTrace, "RunActivity:Charge", "flashsale-worker");
      ev.equal(schedule.id(), run.parent(), "the charge activity runs under its schedule span");
      Span call = one(inTrace, "channel charge", "flashsale-worker");
      ev.check(call.kind().equals("CLIENT") && call.parent().equals(run.id()),
          "the channel call is a client span under the charge activity");

      // the channel received that span as its parent
      String expected = "traceparent=00-" + trace + "-" + call.id() + "-01";
      List<String> chargeLines = apiLines.stream().filter(l -> l.contains("POST /charge merchant_order=" + id)).toList();
      chargeLines.forEach(l -> ev.note("channel " + l));
      ev.check(chargeLines.stream().anyMatch(l -> l.contains(expected)),
          "the channel's charge request carried " + expected);

      // the create request: API → update-with-start → the workflow run
      Span createServer = one(inTrace, "POST /orders", "flashsale-api");
      ev.equal(createParent, createServer.parent(), "the create request's span continues the client's traceparent");
      Span start = one(inTrace, "UpdateWithStartWorkflow:OrderWorkflow", "flashsale-api");
      ev.equal(createServer.id(), start.parent(), "the update-with-start span is a child of the create request's span");
      // a replayed run (above) records its run span again, under the same parent
      List<Span> runSpans = inTrace.stream()
          .filter(s -> s.name().equals("RunWorkflow:OrderWorkflow") && s.service().equals("flashsale-worker")).toList();
      ev.check(!runSpans.isEmpty(), "the workflow run's span is in the trace");
      ev.check(runSpans.stream().allMatch(r -> r.parent().equals(start.id())),
          "the workflow run's span is a child of the update-with-start span"
              + (runSpans.size() > 1 ? " (each of its " + runSpans.size() + ": the run was replayed)" : ""));

      // a request without a traceparent starts a trace of its own
      Optional<Span> login = spans(apiLines).stream().filter(s -> s.name().equals("POST /session")).findFirst();
      ev.check(login.isPresent() && login.get().parent().equals("none") && !login.get().trace().equals(trace),
          "a request without traceparent is the root of its own trace");

      // the trace id beside the order id in both processes' log lines
      String tag = "trace_id=" + trace + " orderId=" + id + ":";
      List<String> apiAbout = apiLines.stream().filter(l -> l.contains(tag) && l.contains(" io.flashsale.api.")).toList();
      List<String> workerAbout = workerLines.stream().filter(l -> l.contains(tag)).toList();
      apiAbout.forEach(l -> ev.note("api log " + l));
      workerAbout.forEach(l -> ev.note("worker log " + l));
      ev.check(!apiAbout.isEmpty(), "the API's log lines about " + id + " carry trace_id=" + trace);
      ev.check(workerAbout.stream().anyMatch(l -> l.contains(" io.flashsale.activities.")),
          "the worker's activity log lines about " + id + " carry trace_id=" + trace);
      ev.check(workerAbout.stream().anyMatch(l -> l.contains(" io.flashsale.workflows.")),
          "the workflow code's log lines about " + id + " carry trace_id=" + trace);
      ev.note("spans in the trace: " + inTrace.size() + " (API " + inTrace.stream()
          .filter(s -> s.service().equals("flashsale-api")).count() + ", worker "
          + inTrace.stream().filter(s -> s.service().equals("flashsale-worker")).count() + ")");
    }
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static Span one(List<Span> spans, String name, String service) {
    List<Span> found = spans.stream().filter(s -> s.name().equals(name) && s.service().equals(service)).toList();
    ev.equal(1, found.size(), "one span " + name + " from " + service + " in the trace");
    if (found.isEmpty()) throw new AssertionError("no span " + name + " from " + service);
    return found.get(0);
  }

  static List<Span> spans(List<String> lines) {
    List<Span> out = new ArrayList<>();
    for (String line : lines) {
      Matcher m = SPAN.matcher(line);
      if (m.find()) {
        out.add(new Span(m.group(1), m.group(2), m.group(3), m.group(4), m.group(5), m.group(8),
            line.substring(m.start())));
      }
    }
    return out;
  }

  private static List<String> logLines(ChildJvm child) {
    try {
      return child.log().lines().toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String hex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private static String traceparent(String trace, String parent) {
    return "00-" + trace + "-" + parent + "-01";
  }

  /** A buyer's POST carrying the client's traceparent (the test client's HttpJson sends none). */
  private static JsonNode post(HttpJson buyer, String path, String json, String traceparent) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wiring.apiPort() + path))
        .header("Authorization", "Bearer " + buyer.token())
        .header("Content-Type", "application/json")
        .header("traceparent", traceparent)
        .POST(json == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(json))
        .build();
    HttpResponse<String> r = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    ev.note("POST " + path + " (traceparent " + traceparent + ") -> " + r.statusCode() + " " + r.body());
    return new ObjectMapper().readTree(r.body());
  }
}
