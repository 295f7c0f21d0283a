package io.flashsale.api.resources;

import com.codahale.metrics.Counter;
import io.flashsale.api.core.ApiError;
import io.flashsale.api.representations.CallbackAck;
import io.flashsale.domain.Notice;
import io.flashsale.paymentchannel.CallbackRefusal;
import io.flashsale.paymentchannel.ChannelNotice;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.persistence.Notifications;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.workflows.Orders;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Payment callbacks: record the arrival, signal the order's workflow, answer 200 once Temporal
 * accepted the signal (500 otherwise, so the channel retries). The effect is decided in the
 * workflow and written back on the arrival's row; only a success the order already applied (the
 * charge it was settled with, or a copy of an applied notice) is answered with its effect at
 * arrival (docs/DESIGN.md §Callbacks). The channel's own format is behind the port: its
 * {@link io.flashsale.paymentchannel.CallbackReader} verifies the signature and reads the notice,
 * and a refusal is only mapped to its problem detail here. The default channel's callbacks arrive
 * at {@code /callbacks/payment}, any registered channel's at {@code /callbacks/payment/<id>}; a
 * notice for an order of another channel is not applied (answered like an unknown order).
 */
@Path("/callbacks/payment")
@Produces(MediaType.APPLICATION_JSON)
public class CallbackResource {
  private static final Logger log = LoggerFactory.getLogger(CallbackResource.class);

  private final Notifications notifications;
  private final OrderQueries queries;
  private final Orders orders;
  /** The channels by id, each with its callback format (verification and reading). */
  private final PaymentChannels channels;
  /** Notices of an applied success, answered from their arrival row (the metric flashsale.callbacks.answeredAtArrival). */
  private final Counter answeredAtArrival = new Counter();

  /**
   * @param channels the registered channels; a callback is verified and read by its channel's
   *     {@link io.flashsale.paymentchannel.CallbackReader} before anything is recorded
   */
  public CallbackResource(Notifications notifications, OrderQueries queries, Orders orders, PaymentChannels channels) {
    this.notifications = notifications;
    this.queries = queries;
    this.orders = orders;
    this.channels = channels;
  }

  /** A callback of the default channel. */
  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  public Response receive(@Context HttpHeaders headers, byte[] raw) {
    return receive(channels.defaultId(), headerLookup(headers), raw);
  }

  /** A callback of the channel {@code channel}; an id no channel is registered under is 404. */
  @POST
  @Path("/{channel}")
  @Consumes(MediaType.APPLICATION_JSON)
  public Response receiveOf(@PathParam("channel") String channel, @Context HttpHeaders headers, byte[] raw) {
    return receive(channel, headerLookup(headers), raw);
  }

  /** A callback of the default channel, its headers given by name. */
  public Response receive(Function<String, String> header, byte[] raw) {
    return receive(channels.defaultId(), header, raw);
  }

  /**
   * A callback through channel {@code channelId}: verified and read by that channel's reader (a
   * refusal is its problem detail, with the callback challenge on a 401), recorded, answered at
   * arrival or signalled to the order's workflow.
   */
  public Response receive(String channelId, Function<String, String> header, byte[] raw) {
    PaymentChannels.Entry channel = channels.find(channelId);
    if (channel == null) {
      throw ApiError.exception(404, "UNKNOWN_CHANNEL", "no payment channel has this id");
    }
    ChannelNotice n;
    try {
      n = channel.callbacks().read(header, raw);
    } catch (CallbackRefusal r) {
      throw ApiError.exception(r.unauthenticated()
          ? ApiError.unauthorized(ApiError.CALLBACK_CHALLENGE, r.code(), r.getMessage())
          : ApiError.response(r.status(), r.code(), r.getMessage()));
    }
    String notifyId = n.notifyId();
    String merchantOrder = n.merchantOrder();
    String kind = n.kind();
    long amount = n.amount();
    String txn = n.txn();

    Notifications.Arrival recorded = notifications.recordArrival(channel.id(), notifyId, merchantOrder, kind, amount, txn);
    long arrival = recorded.id();
    if (recorded.answeredAtArrival()) {
      // a success the order already applied: its effect is known, the workflow is not woken. The
      // channel's first notice of the charge keeps its line; a copy of an applied notice is only
      // counted (a retry storm must not flood the log; its rows keep every arrival)
      answeredAtArrival.inc();
      if (recorded.copyOfApplied()) {
        log.debug("order {} callback {} {} (a copy) answered at arrival {}: {}", merchantOrder, notifyId, kind,
            arrival, recorded.effect());
      } else {
        log.info("order {} callback {} {} answered at arrival {}: {}", merchantOrder, notifyId, kind, arrival,
            recorded.effect());
      }
      return Response.ok(new CallbackAck(true, recorded.effect(), arrival)).build();
    }
    OrderDetails o = queries.get(merchantOrder);
    if (o == null) {
      notifications.markEffect(arrival, Notifications.UNKNOWN_ORDER);
      log.warn("callback {} for unknown order {}", notifyId, merchantOrder);
      return Response.ok(new CallbackAck(true, Notifications.UNKNOWN_ORDER, null)).build();
    }
    if (!channel.id().equals(o.channel())) {
      // a channel never settles another channel's order: answered like an unknown order
      notifications.markEffect(arrival, Notifications.UNKNOWN_ORDER);
      log.warn("callback {} from channel {} for order {} of channel {}: not applied", notifyId, channel.id(),
          merchantOrder, o.channel());
      return Response.ok(new CallbackAck(true, Notifications.UNKNOWN_ORDER, null)).build();
    }
    Notice notice = new Notice(arrival, notifyId, kind, amount, txn);
    try {
      if (!orders.signalRunning(o.workflowId(), notice)) {
        // the run ended since the arrival was recorded (a PAID order's run ends with its pay, and
        // the channel's notice races the reply): the row may answer it now; if not, a new run
        String effect = notifications.answerIfNowSettled(channel.id(), arrival);
        if (effect != null) {
          answeredAtArrival.inc();
          log.info("order {} callback {} {} answered from the row after its run ended {}: {}", merchantOrder, notifyId,
              kind, arrival, effect);
          return Response.ok(new CallbackAck(true, effect, arrival)).build();
        }
        orders.notify(o.workflowId(), o.tenant(), o.subject(), o.requestKey(), o.orderId(), notice);
      }
    } catch (RuntimeException e) {
      notifications.markEffect(arrival, Notifications.NOT_DELIVERED);
      log.error("order {} callback {} could not be signalled", merchantOrder, notifyId, e);
      return ApiError.response(500, "SIGNAL_FAILED", "the order workflow did not take the notice; retry");
    }
    log.info("order {} callback {} {} accepted (arrival {})", merchantOrder, notifyId, kind, arrival);
    return Response.ok(new CallbackAck(true, null, arrival)).build();
  }

  /** A request header by name, its first value (as a header parameter reads it), null when absent. */
  private static Function<String, String> headerLookup(HttpHeaders headers) {
    return name -> headers == null ? null : headers.getRequestHeaders().getFirst(name);
  }

  public Counter answeredAtArrival() {
    return answeredAtArrival;
  }


}
