package io.flashsale.activities;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.paymentchannel.CallbackRefusal;
import io.flashsale.paymentchannel.ChannelNotice;
import io.flashsale.paymentchannel.ChannelReply;
import io.flashsale.paymentchannel.ChannelResult;
import io.flashsale.paymentchannel.ChargeRequest;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.paymentchannel.RefundRequest;
import io.flashsale.workflows.ChannelActivities;
import io.flashsale.workflows.ChannelActivities.Converged;
import io.temporal.failure.ApplicationFailure;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Channel calls as activities, through the {@link PaymentChannel} port. Idempotent at the channel:
 * charge by merchant order, refund by key. Each call goes to the order's channel in the
 * {@link PaymentChannels} registry: with one registered channel that is it, with no lookup; with
 * several, the order's {@code orders.channel} names it. The activities' inputs and results are
 * unchanged, so the workflow's histories are too.
 */
public class ChannelActivitiesImpl implements ChannelActivities {
  private static final Logger log = LoggerFactory.getLogger(ChannelActivitiesImpl.class);

  private final PaymentChannels channels;
  /** The channel id of an order (read only when several channels are registered). */
  private final Function<String, String> channelOf;
  private final Safeguards safeguards;

  public ChannelActivitiesImpl(PaymentChannel client) {
    this(client, new Safeguards());
  }

  /** One channel: every order is on it. */
  public ChannelActivitiesImpl(PaymentChannel client, Safeguards safeguards) {
    this(PaymentChannels.single(client, ChannelActivitiesImpl::noCallbacks), orderId -> PaymentChannels.DEFAULT,
        safeguards);
  }

  /**
   * @param channelOf the id of an order's channel ({@code OrderQueries.channelOf}); consulted only
   *     when more than one channel is registered
   */
  public ChannelActivitiesImpl(PaymentChannels channels, Function<String, String> channelOf, Safeguards safeguards) {
    this.channels = channels;
    this.channelOf = channelOf;
    this.safeguards = safeguards;
  }

  /** The channel an order is paid through. */
  PaymentChannel channelFor(String orderId) {
    if (channels.single()) return channels.defaultChannel();
    String id = channelOf.apply(orderId);
    PaymentChannels.Entry e = channels.find(id);
    if (e == null) {
      // no answer (UNKNOWN, queried again later): the order names a channel this worker does not
      // have, a configuration to fix; never another channel
      throw new IllegalStateException("order " + orderId + " is on channel " + id + ", which is not registered here: "
          + channels.ids());
    }
    return e.channel();
  }

  private static ChannelNotice noCallbacks(Function<String, String> header, byte[] body) throws CallbackRefusal {
    throw CallbackRefusal.badSignature("callback signatures cannot be verified here");
  }

  public static String refundKey(String orderId) {
    return "rf-" + orderId;
  }

  @Override
  public ChannelAnswer charge(String orderId, long amount) {
    ChannelAnswer a = answer(channelFor(orderId).charge(new ChargeRequest(orderId, amount)));
    log.info("order {} charge {} -> {} ({})", orderId, amount, a.result(), a.detail());
    return a;
  }

  @Override
  public ChannelAnswer query(String orderId) {
    ChannelAnswer a = answer(channelFor(orderId).query(orderId));
    log.info("order {} query -> {}", orderId, a.result());
    return a;
  }

  @Override
  public ChannelAnswer close(String orderId) {
    if (!safeguards.on(Safeguards.Safeguard.CLOSE_BEFORE_FAIL)) { // negative control C29-15 only: NOT_FOUND taken as "not charged"
      log.warn("order {} close SKIPPED (negative control): acting as if CLOSED", orderId);
      return new ChannelAnswer(ChannelResult.CLOSED, null, "close skipped");
    }
    ChannelAnswer a = answer(channelFor(orderId).close(orderId));
    log.info("order {} close -> {}", orderId, a.result());
    return a;
  }

  @Override
  public Converged converge(String orderId) {
    ChannelAnswer a = query(orderId);
    boolean byClose = a.result() == ChannelResult.NOT_FOUND;
    if (byClose) {
      // NOT_FOUND is not "not charged": the request may still land; a close makes it never land
      a = close(orderId);
    }
    if (!a.definite()) {
      // retryable: the server retries it with the round's backoff, adding no history meanwhile
      throw ApplicationFailure.newFailure("order " + orderId + ": no definite answer from the channel ("
          + a.detail() + ")", "CHANNEL_NO_ANSWER");
    }
    return new Converged(a, byClose);
  }

  @Override
  public ChannelAnswer refund(String orderId, long amount) {
    ChannelReply reply = channelFor(orderId).refund(new RefundRequest(orderId, refundKey(orderId), amount));
    ChannelAnswer a = answer(reply);
    log.info("order {} refund {} -> {} ({})", orderId, refundKey(orderId), a.result(), a.detail());
    if (reply.refused()) {
      // a definite refusal (not charged, other amount, refunded under another key): retrying the
      // same request cannot help; the workflow waits and tries a later round, an operator looks
      throw ApplicationFailure.newNonRetryableFailure("refund of " + orderId + " refused: " + a.detail(),
          ChannelActivities.REFUND_REFUSED);
    }
    if (a.result() != ChannelResult.REFUNDED) {
      // Temporal retries with the same refund key; the channel answers a replay with the same refund
      throw new IllegalStateException("refund of " + orderId + " not confirmed: " + a.result() + " " + a.detail());
    }
    return a;
  }

  /** The activity's result as workflow histories record it. */
  static ChannelAnswer answer(ChannelReply reply) {
    return new ChannelAnswer(reply.result(), reply.txn(), reply.detail());
  }
}
