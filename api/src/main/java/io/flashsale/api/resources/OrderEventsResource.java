package io.flashsale.api.resources;

import io.flashsale.api.representations.StatusChange;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.auth.Auth;
import io.flashsale.api.auth.Caller;
import io.flashsale.api.auth.TokenAuthenticator;
import io.flashsale.api.core.ApiError;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries.TimelineEntry;
import io.flashsale.persistence.OrderQueries;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.StreamingOutput;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * GET /orders/{id}/events: the order's transitions as server-sent events (event id = version),
 * resumable with Last-Event-ID. The caller's permission is checked again before every event and
 * every second, so the stream ends (event "revoked", with the reason) when its principal is revoked
 * or logs out or the key of its token is retired; it also ends when the token that opened it
 * expires (event "expired"); the number of open streams is bounded (503).
 */
@Path("/orders/{id}/events")
public class OrderEventsResource {
  private static final Logger log = LoggerFactory.getLogger(OrderEventsResource.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long POLL_MS = 200;
  private static final long RECHECK_MS = 1_000;

  private final OrderQueries queries;
  private final TokenAuthenticator authenticator;
  private final PrincipalSlots streams;
  private final long maxStreamMillis;
  private final long heartbeatMillis;
  private volatile boolean stopping;

  public OrderEventsResource(OrderQueries queries, TokenAuthenticator authenticator, int maxStreams, long maxStreamMillis,
      long heartbeatMillis) {
    this(queries, authenticator, maxStreams, maxStreams, maxStreamMillis, heartbeatMillis);
  }

  /** {@code maxStreamsPerPrincipal}: one principal's share of the streams, so one token cannot take them all. */
  public OrderEventsResource(OrderQueries queries, TokenAuthenticator authenticator, int maxStreams, int maxStreamsPerPrincipal,
      long maxStreamMillis, long heartbeatMillis) {
    this.queries = queries;
    this.authenticator = authenticator;
    this.streams = new PrincipalSlots(maxStreams, maxStreamsPerPrincipal);
    this.maxStreamMillis = maxStreamMillis;
    this.heartbeatMillis = heartbeatMillis;
  }

  /**
   * The service is stopping: every open stream ends within one poll, so the drain does not wait
   * for streams that would run until maxEventStreamDuration (the client resumes with Last-Event-ID).
   */
  public void endStreams() {
    stopping = true;
  }

  /** Streams open right now (the metric flashsale.sse.open). */
  public int openStreams() {
    return streams.inUse();
  }

  @GET
  @Produces("text/event-stream")
  public Response events(@Auth Caller caller, @PathParam("id") String id, @HeaderParam("Last-Event-ID") String lastEventId,
      @jakarta.ws.rs.core.Context jakarta.servlet.http.HttpServletRequest request) {
    OrderDetails o = OwnOrders.require(queries, caller, id);
    if (OwnOrders.isHead(request)) {
      // no stream will be written, so no slot is taken (a StreamingOutput never written never gives one back)
      return Response.ok().type("text/event-stream").header("Cache-Control", "no-cache").build();
    }
    int after;
    try {
      after = lastEventId == null || lastEventId.isBlank() ? 0 : Integer.parseInt(lastEventId.trim());
    } catch (NumberFormatException e) {
      throw ApiError.badRequest("INVALID_LAST_EVENT_ID", "Last-Event-ID must be an order version");
    }
    PrincipalSlots.Slot slot = streams.tryAcquire(caller);
    if (slot.refusal() == PrincipalSlots.Refusal.SERVICE_FULL) {
      return ApiError.unavailable(5, "STREAMS_EXHAUSTED", "too many open event streams; retry later");
    }
    if (slot.refusal() == PrincipalSlots.Refusal.PRINCIPAL_FULL) {
      return ApiError.tooMany(5, "STREAMS_PER_PRINCIPAL", "this principal's event streams are all open; retry later");
    }
    int from = after;
    StreamingOutput body = out -> {
      try {
        stream(caller, o, from, out);
      } finally {
        slot.release();
      }
    };
    return Response.ok(body, "text/event-stream").header("Cache-Control", "no-cache").build();
  }

  private void stream(Caller caller, OrderDetails o, int after, OutputStream out) throws IOException {
    long start = System.currentTimeMillis();
    long lastCheck = start;
    long lastWrite = start;
    int seen = after;
    write(out, ": stream of " + o.orderId() + " from version " + after + "\n\n");
    try {
      while (System.currentTimeMillis() - start < maxStreamMillis) {
        if (stopping) {
          log.info("order {} event stream ended: the service is stopping", o.orderId());
          return;
        }
        long now = System.currentTimeMillis();
        if (expired(caller, now)) {
          // the stream is as good as the token that opened it: the client logs in again and resumes
          write(out, "event: expired\ndata: " + JSON.writeValueAsString(java.util.Map.of("error", "TOKEN_EXPIRED")) + "\n\n");
          log.info("order {} event stream ended: the token of {}/{} expired", o.orderId(), caller.tenant(),
              caller.subject());
          return;
        }
        if (now - lastCheck >= RECHECK_MS) {
          if (!allowed(caller, o, out)) return;
          lastCheck = now;
        }
        for (TimelineEntry t : queries.transitionsAfter(o.orderId(), seen)) {
          if (!allowed(caller, o, out)) return; // permission re-checked per event
          StatusChange data = StatusChange.of(o.orderId(), t);
          write(out, "id: " + t.version() + "\nevent: transition\ndata: " + JSON.writeValueAsString(data) + "\n\n");
          seen = t.version();
          lastWrite = System.currentTimeMillis();
        }
        if (System.currentTimeMillis() - lastWrite >= heartbeatMillis) {
          write(out, ": keep-alive\n\n"); // also how a vanished client is noticed
          lastWrite = System.currentTimeMillis();
        }
        Thread.sleep(POLL_MS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException gone) {
      log.info("order {} event stream closed by the client", o.orderId());
    }
  }

  private boolean allowed(Caller caller, OrderDetails o, OutputStream out) throws IOException {
    if (!OwnOrders.owns(caller, o)) return end(out, o, caller, "REVOKED");
    var refusal = authenticator.refusal(caller);
    return refusal.isEmpty() || end(out, o, caller, refusal.get().name());
  }

  private static boolean end(OutputStream out, OrderDetails o, Caller caller, String code) throws IOException {
    write(out, "event: revoked\ndata: " + JSON.writeValueAsString(java.util.Map.of("error", code)) + "\n\n");
    log.info("order {} event stream ended: {} for {}/{}", o.orderId(), code, caller.tenant(), caller.subject());
    return false;
  }

  /** The token verifies through its expiry second (TokenService), so it is expired after it. */
  static boolean expired(Caller caller, long nowMillis) {
    return nowMillis / 1000 > caller.expiresAtEpochSecond();
  }

  private static void write(OutputStream out, String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
