package io.flashsale.api.observe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.workflows.OrderStart;
import io.temporal.common.SearchAttributeUpdate;
import io.temporal.common.interceptors.ActivityInboundCallsInterceptor;
import io.temporal.common.interceptors.ActivityInboundCallsInterceptorBase;
import io.temporal.common.interceptors.WorkerInterceptorBase;
import io.temporal.common.interceptors.WorkflowInboundCallsInterceptor;
import io.temporal.common.interceptors.WorkflowInboundCallsInterceptorBase;
import io.temporal.common.interceptors.WorkflowOutboundCallsInterceptor;
import io.temporal.common.interceptors.WorkflowOutboundCallsInterceptorBase;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Every log line about an order carries its id in the MDC key {@value #KEY} (the log format shows
 * it): on the API side from the request path, the callback body or the create answer; on the
 * worker side from the activity arguments and, in the workflow, from its start arguments and the
 * OrderId search attribute it sets.
 */
public final class OrderMdc {
  public static final String KEY = io.flashsale.domain.LogKeys.ORDER_ID;
  private static final Pattern ORDER_ID = Pattern.compile("ord-\\d{1,18}");
  private static final String SEARCH_ATTRIBUTE = "OrderId";

  private OrderMdc() {}

  static String orderId(Object value) {
    return value instanceof String s && ORDER_ID.matcher(s).matches() ? s : null;
  }

  private static void put(String orderId) {
    if (orderId != null) MDC.put(KEY, orderId);
  }

  /** The ids of the span current on this thread (docs/DESIGN.md §Tracing), or none. */
  private static void traceIds() {
    io.opentelemetry.api.trace.SpanContext span = io.opentelemetry.api.trace.Span.current().getSpanContext();
    if (span.isValid()) HttpTracing.putIds(span);
    else HttpTracing.clearIds();
  }

  // ---------------------------------------------------------------- API side

  /**
   * Puts the order id of the request into the MDC (path parameter {@code id}, the callback's
   * {@code merchant_order}, the create answer's {@code order_id}) and logs one line per order
   * command with it.
   */
  @jakarta.annotation.Priority(jakarta.ws.rs.Priorities.USER)
  public static final class JerseyFilter implements ContainerRequestFilter, ContainerResponseFilter {
    private static final Logger log = LoggerFactory.getLogger("io.flashsale.api.requests");
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A callback is a few hundred bytes; a bigger body is left to the resource to refuse. */
    private static final int MAX_PEEK = 64 * 1024;

    @Override
    public void filter(ContainerRequestContext req) throws IOException {
      put(orderId(req.getUriInfo().getPathParameters().getFirst("id")));
      if ("POST".equals(req.getMethod()) && req.getUriInfo().getPath().startsWith("callbacks/") && req.hasEntity()) {
        // the resource reads (and checks the signature over) the same bytes
        byte[] raw = req.getEntityStream().readNBytes(MAX_PEEK + 1);
        if (raw.length <= MAX_PEEK) {
          try {
            JsonNode body = JSON.readTree(raw);
            if (body != null) put(orderId(body.path("merchant_order").asText(null)));
          } catch (IOException ignored) {
            // malformed: the resource answers it
          }
        }
        req.setEntityStream(new java.io.SequenceInputStream(new ByteArrayInputStream(raw), req.getEntityStream()));
      }
    }

    @Override
    public void filter(ContainerRequestContext req, ContainerResponseContext resp) {
      if (resp.getEntity() instanceof Map<?, ?> m) put(orderId(m.get("order_id")));
      if ("POST".equals(req.getMethod()) && req.getUriInfo().getPath().startsWith("orders")) {
        // a create refused without an order (404 UNKNOWN_SKU, 409 SOLD_OUT / USER_LIMIT, 422 KEY_REUSED,
        // 503) is counted (flashsale.create.refused.*, flashsale.gate.overloaded; an engine failure
        // logs its own WARN), not logged: a sale-day crowd would write a line per refusal. DEBUG on
        // this logger shows those too. Bad requests (400, 401, 403, 413) keep their line
        int status = resp.getStatus();
        boolean refusedCreate = "orders".equals(req.getUriInfo().getPath())
            && (status == 404 || status == 409 || status == 422 || status == 503);
        if (refusedCreate ? !log.isDebugEnabled() : !log.isInfoEnabled()) return;
        Object outcome = resp.getEntity() instanceof Map<?, ?> m ? m.get("outcome") : null;
        String line = "POST /" + req.getUriInfo().getPath() + " -> " + resp.getStatus() + (outcome == null ? "" : " " + outcome);
        if (refusedCreate) log.debug(line);
        else log.info(line);
      }
    }
  }

  /** Clears the key around every request: the server's threads are pooled. */
  public static final class ClearFilter implements Filter {
    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
        throws IOException, ServletException {
      MDC.remove(KEY);
      try {
        chain.doFilter(request, response);
      } finally {
        MDC.remove(KEY);
      }
    }
  }

  // ---------------------------------------------------------------- worker side

  /**
   * For WorkerFactoryOptions: sets the key for activities and workflow code (no effect on history),
   * and the trace ids of the current span; placed inside the tracing interceptor, so that span is
   * the task's own.
   */
  public static final class WorkerInterceptor extends WorkerInterceptorBase {
    @Override
    public ActivityInboundCallsInterceptor interceptActivity(ActivityInboundCallsInterceptor next) {
      return new ActivityInboundCallsInterceptorBase(next) {
        @Override
        public ActivityOutput execute(ActivityInput input) {
          String id = null;
          for (Object a : input.getArguments()) {
            if ((id = orderId(a)) != null) break;
          }
          MDC.remove(KEY);
          put(id); // reserve() has no id yet: it puts the one it allocates
          traceIds(); // the activity's span, when the tracing interceptor (outside this one) started it
          try {
            return super.execute(input);
          } finally {
            MDC.remove(KEY);
            HttpTracing.clearIds();
          }
        }
      };
    }

    @Override
    public WorkflowInboundCallsInterceptor interceptWorkflow(WorkflowInboundCallsInterceptor next) {
      return new WorkflowMdc(next);
    }
  }

  /**
   * One per workflow execution. The id is known from the start arguments (a loaded order) or once
   * the workflow sets its OrderId search attribute; every workflow thread puts it before workflow
   * code logs (thread start, activity calls, waits) and removes it when it ends.
   */
  private static final class WorkflowMdc extends WorkflowInboundCallsInterceptorBase {
    private volatile String orderId;

    WorkflowMdc(WorkflowInboundCallsInterceptor next) {
      super(next);
    }

    private void refresh() {
      put(orderId);
      traceIds();
    }

    @Override
    public void init(WorkflowOutboundCallsInterceptor outbound) {
      super.init(new WorkflowOutboundCallsInterceptorBase(outbound) {
        @Override
        public void upsertTypedSearchAttributes(SearchAttributeUpdate<?>... updates) {
          for (SearchAttributeUpdate<?> u : updates) {
            if (SEARCH_ATTRIBUTE.equals(u.getKey().getName())) {
              String id = orderId(u.getValue().orElse(null));
              if (id != null) orderId = id;
            }
          }
          refresh();
          super.upsertTypedSearchAttributes(updates);
        }

        @Override
        public <R> ActivityOutput<R> executeActivity(ActivityInput<R> input) {
          refresh();
          return super.executeActivity(input);
        }

        @Override
        public void await(String reason, Supplier<Boolean> unblock) {
          super.await(reason, unblock);
          refresh();
        }

        @Override
        public boolean await(Duration timeout, String reason, Supplier<Boolean> unblock) {
          boolean r = super.await(timeout, reason, unblock);
          refresh();
          return r;
        }
      });
    }

    @Override
    public WorkflowOutput execute(WorkflowInput input) {
      for (Object a : input.getArguments()) {
        if (a instanceof OrderStart s && orderId(s.orderId()) != null) orderId = s.orderId();
      }
      refresh();
      return super.execute(input);
    }

    @Override
    public void handleSignal(SignalInput input) {
      refresh();
      super.handleSignal(input);
    }

    @Override
    public UpdateOutput executeUpdate(UpdateInput input) {
      refresh();
      return super.executeUpdate(input);
    }

    @Override
    public Object newWorkflowMethodThread(Runnable runnable, String name) {
      return super.newWorkflowMethodThread(scoped(runnable), name);
    }

    @Override
    public Object newCallbackThread(Runnable runnable, String name) {
      return super.newCallbackThread(scoped(runnable), name);
    }

    private Runnable scoped(Runnable runnable) {
      return () -> {
        refresh();
        try {
          runnable.run();
        } finally {
          MDC.remove(KEY); // workflow threads are pooled
          HttpTracing.clearIds();
        }
      };
    }
  }
}
