package io.flashsale.activities;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.paymentchannel.ChannelReply;
import io.flashsale.paymentchannel.ChannelResult;
import io.flashsale.paymentchannel.ChargeRequest;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.RefundRequest;
import io.flashsale.workflows.ChannelActivities;
import io.temporal.failure.ApplicationFailure;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Channel calls as activities, through the {@link PaymentChannel} port. Idempotent at the channel:
 * charge by merchant order, refund by key.
 */
public class ChannelActivitiesImpl implements ChannelActivities {
  private static final Logger log = LoggerFactory.getLogger(ChannelActivitiesImpl.class);

  private final PaymentChannel client;
  private final Safeguards safeguards;

  public ChannelActivitiesImpl(PaymentChannel client) {
    this(client, new Safeguards());
  }

  public ChannelActivitiesImpl(PaymentChannel client, Safeguards safeguards) {
    this.client = client;
    this.safeguards = safeguards;
  }

  public static String refundKey(String orderId) {
    return "rf-" + orderId;
  }

  @Override
  public ChannelAnswer charge(String orderId, long amount) {
    ChannelAnswer a = answer(client.charge(new ChargeRequest(orderId, amount)));
    log.info("order {} charge {} -> {} ({})", orderId, amount, a.result(), a.detail());
    return a;
  }

  @Override
  public ChannelAnswer query(String orderId) {
    ChannelAnswer a = answer(client.query(orderId));
    log.info("order {} query -> {}", orderId, a.result());
    return a;
  }

  @Override
  public ChannelAnswer close(String orderId) {
    if (!safeguards.on(Safeguards.Safeguard.CLOSE_BEFORE_FAIL)) { // negative control C29-15 only: NOT_FOUND taken as "not charged"
      log.warn("order {} close SKIPPED (negative control): acting as if CLOSED", orderId);
      return new ChannelAnswer(ChannelResult.CLOSED, null, "close skipped");
    }
    ChannelAnswer a = answer(client.close(orderId));
    log.info("order {} close -> {}", orderId, a.result());
    return a;
  }

  @Override
  public ChannelAnswer refund(String orderId, long amount) {
    ChannelReply reply = client.refund(new RefundRequest(orderId, refundKey(orderId), amount));
    ChannelAnswer a = answer(reply);
    log.info("order {} refund {} -> {} ({})", orderId, refundKey(orderId), a.result(), a.detail());
    if (reply.refused()) {
      // a definite refusal (not charged, other amount, refunded under another key): retrying the
      // same request cannot help; the workflow waits and tries a later round, an operator looks
      throw ApplicationFailure.newNonRetryableFailure("refund of " + orderId + " refused: " + a.detail(),
          "REFUND_REFUSED");
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
