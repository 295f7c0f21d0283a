package io.flashsale.api.resources;

import io.flashsale.paymentchannel.ChannelReply;
import io.flashsale.paymentchannel.ChargeRequest;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.RefundRequest;
import io.flashsale.paymentchannel.StatementRow;
import java.util.List;

/** A channel adapter the callback path never calls: every call fails the test. */
final class UnusedChannel implements PaymentChannel {
  @Override
  public ChannelReply charge(ChargeRequest request) {
    throw new AssertionError("the callback path made a charge");
  }

  @Override
  public ChannelReply query(String merchantOrder) {
    throw new AssertionError("the callback path made a query");
  }

  @Override
  public ChannelReply close(String merchantOrder) {
    throw new AssertionError("the callback path closed an order");
  }

  @Override
  public ChannelReply refund(RefundRequest request) {
    throw new AssertionError("the callback path made a refund");
  }

  @Override
  public List<StatementRow> statement() {
    throw new AssertionError("the callback path read the statement");
  }

  @Override
  public boolean reachable() {
    return true;
  }

  @Override
  public String describe() {
    return "unused";
  }
}
