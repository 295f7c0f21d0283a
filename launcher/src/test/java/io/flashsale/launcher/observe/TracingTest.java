package io.flashsale.launcher.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.flashsale.launcher.FlashsaleConfiguration;
import io.flashsale.launcher.FlashsaleConfiguration.TracingSettings;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The exporters' ends: OTLP/HTTP reaches a real HTTP receiver; the configuration refuses otlp without a URL. */
class TracingTest {
  record Received(String method, String path, String contentType, byte[] body) {}

  @Test
  void otlpExportsTheSpansToTheConfiguredUrl() throws Exception {
    List<Received> received = new CopyOnWriteArrayList<>();
    HttpServer collector = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    collector.createContext("/", exchange -> {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      exchange.getRequestBody().transferTo(body);
      received.add(new Received(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
          exchange.getRequestHeaders().getFirst("Content-Type"), body.toByteArray()));
      exchange.sendResponseHeaders(200, -1);
      exchange.close();
    });
    collector.start();
    try {
      TracingSettings settings = new TracingSettings();
      settings.exporter = TracingSettings.Exporter.OTLP;
      settings.otlpEndpoint = "http://127.0.0.1:" + collector.getAddress().getPort() + "/v1/traces";
      Tracing tracing = Tracing.start(settings, Tracing.serviceName(settings, false, true));
      assertEquals("flashsale-worker", tracing.serviceName());
      Span span = tracing.telemetry().getTracer("test").spanBuilder("otlp-probe-span").startSpan();
      SpanContext context = span.getSpanContext();
      span.end();
      tracing.close(); // flushes the batch

      assertEquals(1, received.size(), "one export request");
      Received r = received.get(0);
      assertEquals("POST", r.method());
      assertEquals("/v1/traces", r.path());
      assertEquals("application/x-protobuf", r.contentType());
      String text = new String(r.body(), StandardCharsets.ISO_8859_1);
      assertTrue(text.contains("otlp-probe-span"), "the span's name is in the export");
      assertTrue(text.contains("flashsale-worker"), "the service name is in the export");
      // the trace id travels as its 16 raw bytes
      String traceBytes = new String(HexFormat.of().parseHex(context.getTraceId()), StandardCharsets.ISO_8859_1);
      assertTrue(text.contains(traceBytes), "the span's trace id is in the export");
    } finally {
      collector.stop(0);
    }
  }

  @Test
  void serviceNamesFollowTheRole() {
    TracingSettings settings = new TracingSettings();
    assertEquals("flashsale-api", Tracing.serviceName(settings, true, false));
    assertEquals("flashsale-worker", Tracing.serviceName(settings, false, true));
    assertEquals("flashsale", Tracing.serviceName(settings, true, true));
  }

  @Test
  void otlpWithoutAUrlIsRefused() {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    assertTrue(cfg.isTracingEndpointSet(), "the default (none) needs no URL");
    cfg.tracing.exporter = TracingSettings.Exporter.OTLP;
    assertFalse(cfg.isTracingEndpointSet(), "otlp without tracing.otlpEndpoint fails validation");
    cfg.tracing.otlpEndpoint = "http://collector:4318/v1/traces";
    assertTrue(cfg.isTracingEndpointSet());
  }
}
