package io.flashsale.launcher.observe;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The local exporter: one line per finished span on the logger {@value #LOGGER}, with its trace,
 * its id, its parent's id (none for a root), the service, kind, duration, status, name and
 * attributes: enough to read a trace's tree from the log (README §Tracing shows one).
 */
public final class LogSpanExporter implements SpanExporter {
  public static final String LOGGER = "io.flashsale.tracing";
  private static final Logger log = LoggerFactory.getLogger(LOGGER);

  private final String serviceName;

  public LogSpanExporter(String serviceName) {
    this.serviceName = serviceName;
  }

  /** The line for one span (parsed back by X-31). */
  public static String line(SpanData span, String serviceName) {
    StringJoiner attributes = new StringJoiner(", ", "{", "}");
    span.getAttributes().forEach((k, v) -> attributes.add(k.getKey() + "=" + v));
    String parent = span.getParentSpanContext().isValid() ? span.getParentSpanId() : "none";
    return "span trace=" + span.getTraceId() + " id=" + span.getSpanId() + " parent=" + parent
        + " service=" + serviceName + " kind=" + span.getKind()
        + " ms=" + TimeUnit.NANOSECONDS.toMillis(span.getEndEpochNanos() - span.getStartEpochNanos())
        + " status=" + span.getStatus().getStatusCode() + " name=\"" + span.getName() + "\" " + attributes;
  }

  @Override
  public CompletableResultCode export(Collection<SpanData> spans) {
    for (SpanData span : spans) log.info(line(span, serviceName));
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode flush() {
    return CompletableResultCode.ofSuccess();
  }

  @Override
  public CompletableResultCode shutdown() {
    return CompletableResultCode.ofSuccess();
  }
}
