package io.flashsale.launcher.observe;

import com.uber.m3.tally.RootScopeBuilder;
import com.uber.m3.tally.Scope;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.temporal.common.reporter.MicrometerClientStatsReporter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The Temporal SDK's metrics (client requests, workflow and activity tasks, pollers, workflow
 * completions) in a Prometheus registry, served as the Prometheus text format: on the admin port
 * at {@link #PATH}, or by the worker command on its own port.
 */
public final class SdkMetrics implements AutoCloseable {
  public static final String PATH = "/metrics/prometheus";
  /** The SDK reports through a tally scope that flushes on this period; 1 s keeps a scrape current. */
  private static final double REPORT_EVERY_SECONDS = 1;

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Scope scope;

  /**
   * The SDK tags an update's request with {@code update_name} and every other request of the same
   * meter without it; Prometheus wants one set of tag keys per name, so the first shape registered
   * would shut out the other (the API's creates, pays and cancels would be missing). Every SDK
   * meter without the tag gets {@code update_name="none"}, the SDK's own word for "no such tag".
   */
  static final String UPDATE_NAME = "update_name";
  static final String TASK_QUEUE = "task_queue";
  /**
   * Each instance's warm-up queue is named by a random tag (docs/DESIGN.md §Warm from the first
   * buyer): its meters are reported as one queue, {@code flashsale-warm-up}, so a start adds no series.
   */
  static final String WARM_UP_QUEUES = "flashsale-warm-up-";

  public SdkMetrics() {
    registry.config().meterFilter(new io.micrometer.core.instrument.config.MeterFilter() {
      @Override
      public io.micrometer.core.instrument.Meter.Id map(io.micrometer.core.instrument.Meter.Id id) {
        if (!id.getName().startsWith("temporal_")) return id;
        String queue = id.getTag(TASK_QUEUE);
        if (queue != null && queue.startsWith(WARM_UP_QUEUES)) {
          id = id.replaceTags(io.micrometer.core.instrument.Tags.of(id.getTags())
              .and(TASK_QUEUE, WARM_UP_QUEUES.substring(0, WARM_UP_QUEUES.length() - 1)));
        }
        return id.getTag(UPDATE_NAME) == null ? id.withTag(io.micrometer.core.instrument.Tag.of(UPDATE_NAME, "none")) : id;
      }
    });
    new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry);
    new io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics().bindTo(registry);
    scope = new RootScopeBuilder().reporter(new MicrometerClientStatsReporter(registry))
        .reportEvery(com.uber.m3.util.Duration.ofSeconds(REPORT_EVERY_SECONDS));
  }

  /** For WorkflowServiceStubsOptions: the client and the worker factory take it from the stubs. */
  public Scope scope() {
    return scope;
  }

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public String scrape() {
    return registry.scrape();
  }

  /** GET {@link #PATH}: the Prometheus text exposition format. */
  public HttpServlet servlet() {
    return new HttpServlet() {
      @Override
      protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        resp.setContentType("text/plain; version=0.0.4; charset=utf-8");
        resp.setHeader("Cache-Control", "must-revalidate,no-cache,no-store");
        resp.getOutputStream().write(scrape().getBytes(StandardCharsets.UTF_8));
      }
    };
  }

  /** The worker command has no admin port: its own small HTTP server on host:port serves {@link #PATH}. */
  public com.sun.net.httpserver.HttpServer serve(String host, int port) throws IOException {
    var server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress(host, port), 0);
    server.createContext(PATH, exchange -> {
      byte[] body = scrape().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      exchange.sendResponseHeaders(200, body.length);
      try (var out = exchange.getResponseBody()) {
        out.write(body);
      }
    });
    server.start();
    return server;
  }

  @Override
  public void close() {
    try {
      scope.close(); // flushes the last report
    } catch (com.uber.m3.tally.ScopeCloseException e) {
      // nothing left to report to
    }
    registry.close();
  }
}
