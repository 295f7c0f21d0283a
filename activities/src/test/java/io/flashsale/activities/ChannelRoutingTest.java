package io.flashsale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flashsale.paymentchannel.CallbackRefusal;
import io.flashsale.paymentchannel.CallbackReader;
import io.flashsale.paymentchannel.ChannelReply;
import io.flashsale.paymentchannel.ChannelResult;
import io.flashsale.paymentchannel.ChargeRequest;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.paymentchannel.RefundRequest;
import io.flashsale.paymentchannel.StatementRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The channel activities call the order's channel: with one registered channel that one, without
 * reading the order's channel; with several, the one {@code orders.channel} names.
 */
class ChannelRoutingTest {
  private static final CallbackReader NONE = (header, body) -> {
    throw CallbackRefusal.badSignature("callback signatures cannot be verified here");
  };

  @Test
  void oneChannelIsCalledWithoutLookingTheOrderUp() {
    List<String> calls = new ArrayList<>();
    ChannelActivitiesImpl activities = new ChannelActivitiesImpl(PaymentChannels.single(channel("a", calls), NONE),
        orderId -> {
          throw new AssertionError("the order's channel was read with one channel registered");
        }, new Safeguards());
    activities.charge("ord-1", 100);
    activities.query("ord-1");
    activities.close("ord-1");
    assertEquals(List.of("a charge ord-1", "a query ord-1", "a close ord-1"), calls);
  }

  @Test
  void severalChannelsEachOrderOnItsOwn() {
    List<String> calls = new ArrayList<>();
    Map<String, String> channelOf = Map.of("ord-a", "a", "ord-b", "b", "ord-x", "x");
    ChannelActivitiesImpl activities = new ChannelActivitiesImpl(PaymentChannels.builder()
        .add("a", channel("a", calls), NONE).add("b", channel("b", calls), NONE).build("a"), channelOf::get,
        new Safeguards());
    activities.charge("ord-a", 100);
    activities.charge("ord-b", 100);
    activities.refund("ord-b", 100);
    assertEquals(List.of("a charge ord-a", "b charge ord-b", "b refund ord-b"), calls);
    // an order on a channel this worker does not have: retried, never sent to another channel
    assertThrows(IllegalStateException.class, () -> activities.charge("ord-x", 100));
    assertEquals(3, calls.size());
  }

  private static PaymentChannel channel(String name, List<String> calls) {
    return new PaymentChannel() {
      @Override
      public ChannelReply charge(ChargeRequest request) {
        calls.add(name + " charge " + request.merchantOrder());
        return new ChannelReply(ChannelResult.CHARGED, "t", null, false);
      }

      @Override
      public ChannelReply query(String merchantOrder) {
        calls.add(name + " query " + merchantOrder);
        return new ChannelReply(ChannelResult.CHARGED, "t", null, false);
      }

      @Override
      public ChannelReply close(String merchantOrder) {
        calls.add(name + " close " + merchantOrder);
        return new ChannelReply(ChannelResult.CLOSED, null, null, false);
      }

      @Override
      public ChannelReply refund(RefundRequest request) {
        calls.add(name + " refund " + request.merchantOrder());
        return new ChannelReply(ChannelResult.REFUNDED, null, null, false);
      }

      @Override
      public List<StatementRow> statement() {
        return List.of();
      }

      @Override
      public boolean reachable() {
        return true;
      }

      @Override
      public String describe() {
        return name;
      }
    };
  }
}
