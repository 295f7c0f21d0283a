package io.flashsale.api.observe;

import io.flashsale.domain.LogKeys;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.regex.Pattern;
import org.slf4j.MDC;

/**
 * One server span per API request (docs/DESIGN.md §Tracing): the child of the caller's W3C
 * {@code traceparent} when it sends one, else the root of a new trace. It is current while the
 * resource runs, so the Temporal client's spans (update, update-with-start, signal) are its
 * children and the trace goes on into the workflow; its trace and span ids are in the log context
 * ({@value LogKeys#TRACE_ID}, {@value LogKeys#SPAN_ID}) of every line the request writes.
 */
public final class HttpTracing implements Filter {
  /** Order ids in a path: one span name per route, not per order. */
  private static final Pattern ORDER_ID = Pattern.compile("ord-\\d+");
  private static final TextMapGetter<HttpServletRequest> HEADERS = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(HttpServletRequest carrier) {
      return Collections.list(carrier.getHeaderNames());
    }

    @Override
    public String get(HttpServletRequest carrier, String key) {
      return carrier == null ? null : carrier.getHeader(key);
    }
  };

  private final Tracer tracer;

  public HttpTracing(OpenTelemetry telemetry) {
    this.tracer = telemetry.getTracer("io.flashsale.api");
  }

  /** The route of a path, order ids replaced by {@code {id}}. */
  static String route(String path) {
    return ORDER_ID.matcher(path == null || path.isEmpty() ? "/" : path).replaceAll("{id}");
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request instanceof HttpServletRequest req) || !(response instanceof HttpServletResponse resp)) {
      chain.doFilter(request, response);
      return;
    }
    Context caller = W3CTraceContextPropagator.getInstance().extract(Context.root(), req, HEADERS);
    Span span = tracer.spanBuilder(req.getMethod() + " " + route(req.getRequestURI()))
        .setParent(caller).setSpanKind(SpanKind.SERVER)
        .setAttribute("http.request.method", req.getMethod())
        .setAttribute("url.path", req.getRequestURI())
        .startSpan();
    try (Scope ignored = span.makeCurrent()) {
      putIds(span.getSpanContext());
      chain.doFilter(request, response);
    } catch (IOException | ServletException | RuntimeException e) {
      span.recordException(e);
      span.setStatus(StatusCode.ERROR);
      throw e;
    } finally {
      int status = resp.getStatus();
      span.setAttribute("http.response.status_code", status);
      if (status >= 500) span.setStatus(StatusCode.ERROR);
      span.end();
      clearIds(); // the server's threads are pooled
    }
  }

  /** Puts the span's ids in the log context (nothing for an invalid, i.e. untraced, context). */
  public static void putIds(SpanContext context) {
    if (!context.isValid()) return;
    MDC.put(LogKeys.TRACE_ID, context.getTraceId());
    MDC.put(LogKeys.SPAN_ID, context.getSpanId());
  }

  public static void clearIds() {
    MDC.remove(LogKeys.TRACE_ID);
    MDC.remove(LogKeys.SPAN_ID);
  }
}
