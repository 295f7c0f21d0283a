package io.flashsale.api.resources;

import com.codahale.metrics.Counter;
import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.api.core.ApiError;
import io.flashsale.api.core.Bodies;
import io.flashsale.api.core.StrictJson;
import io.flashsale.api.representations.CallbackAck;
import io.flashsale.domain.Notice;
import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.persistence.Notifications;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.workflows.Orders;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Payment callbacks: record the arrival, signal the order's workflow, answer 200 once Temporal
 * accepted the signal (500 otherwise, so the channel retries). The effect is decided in the
 * workflow and written back on the arrival's row; only a success the order already applied (the
 * charge it was settled with, or a copy of an applied notice) is answered with its effect at
 * arrival (docs/DESIGN.md §Callbacks).
 */
@Path("/callbacks/payment")
@Produces(MediaType.APPLICATION_JSON)
public class CallbackResource {
  private static final Logger log = LoggerFactory.getLogger(CallbackResource.class);
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  private static final Pattern KIND = Pattern.compile("CHARGED|DECLINED|REFUNDED");

  private final Notifications notifications;
  private final OrderQueries queries;
  private final Orders orders;
  /** The callback secrets accepted: the current one first, then one being retired (rotation). */
  private final List<String> secrets;
  /** Notices of an applied success, answered from their arrival row (the metric flashsale.callbacks.answeredAtArrival). */
  private final Counter answeredAtArrival = new Counter();

  /**
   * @param secrets the callback secrets a signature may be made with (the current one and, while
   *     it is rotated out, the previous one); none configured refuses every callback (fail closed)
   */
  public CallbackResource(Notifications notifications, OrderQueries queries, Orders orders, List<String> secrets) {
    this.notifications = notifications;
    this.queries = queries;
    this.orders = orders;
    this.secrets = secrets.stream().filter(s -> s != null && !s.isBlank()).toList();
  }

  @POST
  @Consumes(MediaType.APPLICATION_JSON)
  public Response receive(@HeaderParam(CallbackSignatures.HEADER) String signature, byte[] raw) {
    if (secrets.isEmpty()) {
      // fail closed: without a secret no callback can be told from a forgery
      log.error("callback refused: no channel.callbackSecret is configured, so no signature can be checked");
      throw ApiError.exception(ApiError.unauthorized(ApiError.CALLBACK_CHALLENGE, "BAD_SIGNATURE",
          "callback signatures cannot be verified here"));
    }
    if (!signatureValid(signature, raw)) {
      throw ApiError.exception(ApiError.unauthorized(ApiError.CALLBACK_CHALLENGE, "BAD_SIGNATURE",
          "callback signature missing, stale or wrong"));
    }
    JsonNode body;
    try {
      body = StrictJson.MAPPER.readTree(raw); // one value, each key once: a signed body is read one way
    } catch (IOException e) {
      throw ApiError.badRequest("MALFORMED_JSON", "the request body is not valid JSON");
    }
    // a channel that adds a field must not be refused forever: unknown fields are ignored here
    Bodies.objectIgnoringUnknown(body);
    String notifyId = Bodies.text(body, "notify_id", ID, true);
    String merchantOrder = Bodies.text(body, "merchant_order", ID, true);
    String kind = Bodies.text(body, "kind", KIND, true);
    long amount = Bodies.integer(body, "amount", 0, Long.MAX_VALUE);
    String txn = Bodies.text(body, "txn", ID, false);

    Notifications.Arrival recorded = notifications.recordArrival(notifyId, merchantOrder, kind, amount, txn);
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
    try {
      orders.notify(o.workflowId(), o.tenant(), o.subject(), o.requestKey(), o.orderId(),
          new Notice(arrival, notifyId, kind, amount, txn));
    } catch (RuntimeException e) {
      notifications.markEffect(arrival, Notifications.NOT_DELIVERED);
      log.error("order {} callback {} could not be signalled", merchantOrder, notifyId, e);
      return ApiError.response(500, "SIGNAL_FAILED", "the order workflow did not take the notice; retry");
    }
    log.info("order {} callback {} {} accepted (arrival {})", merchantOrder, notifyId, kind, arrival);
    return Response.ok(new CallbackAck(true, null, arrival)).build();
  }

  public Counter answeredAtArrival() {
    return answeredAtArrival;
  }

  private boolean signatureValid(String header, byte[] raw) {
    long now = System.currentTimeMillis() / 1000;
    for (String secret : secrets) {
      if (CallbackSignatures.valid(secret, header, raw, now)) return true;
    }
    return false;
  }

}
