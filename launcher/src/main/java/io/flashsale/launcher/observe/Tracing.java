package io.flashsale.launcher.observe;

import io.flashsale.launcher.FlashsaleConfiguration.TracingSettings;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.opentracingshim.OpenTracingShim;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SdkTracerProviderBuilder;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.temporal.common.interceptors.WorkerInterceptor;
import io.temporal.common.interceptors.WorkflowClientInterceptor;
import io.temporal.opentracing.OpenTracingClientInterceptor;
import io.temporal.opentracing.OpenTracingOptions;
import io.temporal.opentracing.OpenTracingWorkerInterceptor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One process's tracing (docs/DESIGN.md §Tracing): an OpenTelemetry SDK with the W3C trace
 * context, the Temporal SDK's tracing interceptors on it (through the OpenTracing shim), and the
 * configured exporter. The API's server spans, the client's update spans, the worker's workflow
 * and activity spans and the channel's client spans all come from here, so one trace runs from an
 * HTTP request to the channel call it causes.
 */
public final class Tracing implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Tracing.class);
  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");

  private final OpenTelemetrySdk sdk;
  private final OpenTracingOptions options;
  private final String serviceName;

  private Tracing(OpenTelemetrySdk sdk, String serviceName) {
    this.sdk = sdk;
    this.serviceName = serviceName;
    this.options = OpenTracingOptions.newBuilder().setTracer(OpenTracingShim.createTracerShim(sdk)).build();
  }

  /** The service name for a process in this role: -api (server without a worker), -worker, or as configured. */
  public static String serviceName(TracingSettings settings, boolean api, boolean worker) {
    if (api && !worker) return settings.serviceName + "-api";
    if (worker && !api) return settings.serviceName + "-worker";
    return settings.serviceName;
  }

  /** How often the log exporter writes its batch: soon enough that a local run's log follows the trace. */
  static final java.time.Duration LOG_EVERY = java.time.Duration.ofMillis(200);

  public static Tracing start(TracingSettings settings, String serviceName) {
    SdkTracerProviderBuilder provider = SdkTracerProvider.builder()
        .setResource(Resource.getDefault().merge(Resource.create(Attributes.of(SERVICE_NAME, serviceName))));
    switch (settings.exporter) {
      // spans are still made (their ids reach the logs and the headers), just not sent anywhere
      case NONE -> { }
      // in batches every 200 ms, off the request's thread: written where the span ends, a line per
      // span halved the sold-out answers of ./flashsale server (docs/DESIGN.md §Tracing); under a
      // storm the batch queue (2 048) drops what it cannot hold, as every batching exporter does
      case LOG -> provider.addSpanProcessor(BatchSpanProcessor.builder(new LogSpanExporter(serviceName))
          .setScheduleDelay(LOG_EVERY).build());
      case OTLP -> provider.addSpanProcessor(BatchSpanProcessor.builder(
          OtlpHttpSpanExporter.builder().setEndpoint(settings.otlpEndpoint).build()).build());
    }
    OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
        .setTracerProvider(provider.build())
        .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
        .build();
    log.info("tracing as {}: exporter {}{}", serviceName, settings.exporter.name().toLowerCase(java.util.Locale.ROOT),
        settings.exporter == TracingSettings.Exporter.OTLP ? " to " + settings.otlpEndpoint : "");
    return new Tracing(sdk, serviceName);
  }

  public OpenTelemetry telemetry() {
    return sdk;
  }

  public String serviceName() {
    return serviceName;
  }

  /** For the workflow client: spans for start, update, update-with-start, signal, query; their context in the headers. */
  public WorkflowClientInterceptor clientInterceptor() {
    return new OpenTracingClientInterceptor(options);
  }

  /**
   * For the worker: continues the trace from the headers into the workflow run, its update and
   * signal handlers and its activities. Replay-safe: it writes headers, never commands.
   */
  public WorkerInterceptor workerInterceptor() {
    return new OpenTracingWorkerInterceptor(options);
  }

  /** Sends what is still batched (up to 5 s), then stops the exporter. */
  @Override
  public void close() {
    sdk.getSdkTracerProvider().forceFlush().join(5, TimeUnit.SECONDS);
    sdk.shutdown().join(5, TimeUnit.SECONDS);
  }
}
