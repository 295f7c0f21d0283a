package io.flashsale.paymentchannel;

import java.io.IOException;
import java.util.List;

/**
 * The payment channel as the order service needs it (docs/DESIGN.md §Channel contract). An
 * implementation never throws on the payment path: a missing answer is {@link ChannelResult#UNKNOWN},
 * which the order workflow settles by querying. Charge and refund are idempotent at the channel
 * (by merchant order, by refund key), so activities may repeat them.
 */
public interface PaymentChannel {

  ChannelReply charge(ChargeRequest request);

  ChannelReply query(String merchantOrder);

  ChannelReply close(String merchantOrder);

  ChannelReply refund(RefundRequest request);

  /** The whole ledger, for reconciliation (off the payment path, so it may throw). */
  List<StatementRow> statement() throws IOException, InterruptedException;

  /** Liveness for the health check, cheap. */
  boolean reachable();

  /** Where the channel is, for messages. */
  String describe();
}
