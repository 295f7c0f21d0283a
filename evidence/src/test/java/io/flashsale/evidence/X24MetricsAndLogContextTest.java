package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * observability. The admin port serves the Temporal SDK's metrics in the Prometheus text
 * format (client requests, completed workflows, activity executions, counted for the orders just
 * run), and every service log line about an order carries its id: the API's (request path,
 * callback body, create answer) and the worker's (activities, workflow code), each line its own
 * order's id, formatted with the service's log format.
 */
class X24MetricsAndLogContextTest {
  // a short late-notice window: the workflows complete within the experiment
  @RegisterExtension static final Stack stack = new Stack().with("orders.lateNoticeWindow", "1s");
  @RegisterExtension static final Evidence ev = new Evidence("X-24",
      "Temporal SDK metrics on /metrics/prometheus; log lines carry the order id");

  private static final String SKU = "sku-x24";

  @Test
  void sdkMetricsAndOrderIdInLogs() throws Exception {
    String format = LogCapture.configuredLogFormat();
    ev.note("log format: " + format);
    ev.check(format.contains("%X{orderId}"), "the service's log format shows the MDC key orderId");

    stack.sku(SKU, 5, 3);
    HttpJson alice = stack.api.login("t1", "user-2401");
    HttpJson bob = stack.api.login("t1", "user-2402");
    List<String> lines;
    String paid;
    String cancelled;
    try (LogCapture capture = LogCapture.start(format, "x24-capture")) {
      paid = Buyers.create(alice, "x24-a", SKU, 1).text("order_id");
      cancelled = Buyers.create(bob, "x24-b", SKU, 1).text("order_id");
      ev.equal("PAID", Buyers.pay(alice, paid).text("status"), "order " + paid + " PAID");
      ev.equal(200, bob.post("/orders/" + cancelled + "/cancel", null).status(), "order " + cancelled + " cancelled");
      stack.awaitNoticesApplied(1, 15_000);
      // both workflows complete once the late-notice window passed; the SDK reports every second
      long deadline = System.currentTimeMillis() + 60_000;
      while (sum(scrape(), "temporal_workflow_completed_total") < 2 && System.currentTimeMillis() < deadline) {
        Thread.sleep(500);
      }
      lines = capture.lines();
    }

    HttpJson.Reply metrics = stack.admin.get("/metrics/prometheus");
    ev.equal(200, metrics.status(), "GET :admin/metrics/prometheus answers 200");
    String text = metrics.raw();
    for (String name : List.of("temporal_workflow_completed_total", "temporal_request_total",
        "temporal_activity_execution_latency_seconds_count", "temporal_workflow_task_queue_poll_succeed_total")) {
      double v = sum(text, name);
      ev.note(name + " = " + v + "  e.g. " + firstSample(text, name));
      ev.check(v > 0, name + " is exported and counts the orders just run");
    }
    ev.check(sum(text, "temporal_workflow_completed_total") >= 2, "both order workflows counted as completed");
    ev.check(firstSample(text, "temporal_workflow_completed_total").contains("workflow_type=\"OrderWorkflow\""),
        "tagged with the workflow type");

    for (String id : List.of(paid, cancelled)) {
      String other = id.equals(paid) ? cancelled : paid;
      List<String> about = lines.stream().filter(l -> l.contains("orderId=" + id + ":")).toList();
      about.forEach(l -> ev.note("log " + l));
      ev.check(about.stream().anyMatch(l -> l.contains(" io.flashsale.api.")),
          "API log lines carry orderId=" + id);
      ev.check(about.stream().anyMatch(l -> l.contains(" io.flashsale.activities.")),
          "activity log lines carry orderId=" + id);
      ev.check(lines.stream().filter(l -> l.contains("order " + id + " ")).allMatch(l -> l.contains("orderId=" + id + ":")),
          "every line that names order " + id + " in its message carries orderId=" + id);
      ev.check(about.stream().noneMatch(l -> l.contains(other)), "no line with orderId=" + id + " is about " + other);
    }
    ev.check(lines.stream().anyMatch(l -> l.contains(" io.flashsale.workflows.") && l.contains("orderId=" + paid + ":")),
        "workflow code's log lines carry orderId=" + paid);
    ev.check(lines.stream().anyMatch(l -> l.contains("CallbackResource") && l.contains("orderId=" + paid + ":")),
        "the payment callback's line carries orderId=" + paid + " (from the body)");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  /** A worker process has no admin port: --metrics-port serves the same metrics on its own. */
  @Test
  void aWorkerProcessServesItsSdkMetrics() throws Exception {
    int port = Stack.freePortForChild();
    String url = "http://127.0.0.1:" + port + "/metrics/prometheus";
    try (ChildJvm worker = ChildJvm.start("x24-worker", stack.workerProperties(), "worker", "embedded.yml",
        "--metrics-port", String.valueOf(port))) {
      worker.awaitLog("worker polling", 60_000);
      ev.check(worker.logContains("worker metrics at " + url), "the worker names its metrics URL");
      java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
      String text = "";
      long deadline = System.currentTimeMillis() + 30_000;
      while (sum(text, "temporal_worker_start_total") == 0 && System.currentTimeMillis() < deadline) {
        Thread.sleep(500);
        text = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
            java.net.http.HttpResponse.BodyHandlers.ofString()).body();
      }
      ev.note("worker: " + firstSample(text, "temporal_worker_start_total"));
      ev.check(sum(text, "temporal_worker_start_total") > 0, "the worker's " + url + " shows temporal_worker_start_total");
    }
  }

  private static String scrape() {
    return stack.admin.get("/metrics/prometheus").raw();
  }

  private static final Pattern SAMPLE = Pattern.compile("(?m)^([a-z_]+)(\\{[^}]*\\})? (\\S+)$");

  /** The sum of a metric's samples over all its label sets. */
  static double sum(String text, String name) {
    double s = 0;
    Matcher m = SAMPLE.matcher(text);
    while (m.find()) {
      if (m.group(1).equals(name)) s += Double.parseDouble(m.group(3));
    }
    return s;
  }

  static String firstSample(String text, String name) {
    Matcher m = SAMPLE.matcher(text);
    while (m.find()) {
      if (m.group(1).equals(name)) return m.group();
    }
    return "";
  }
}
