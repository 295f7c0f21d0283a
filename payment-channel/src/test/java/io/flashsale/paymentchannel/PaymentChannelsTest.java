package io.flashsale.paymentchannel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The registry: ids to (adapter, callback reader), one default, no id twice, ids fit a URL and a column. */
class PaymentChannelsTest {
  private static final CallbackReader NONE = (header, body) -> {
    throw CallbackRefusal.badSignature("callback signatures cannot be verified here");
  };

  @Test
  void oneChannelIsTheDefault() {
    PaymentChannel a = channel("a");
    PaymentChannels channels = PaymentChannels.single(a, NONE);
    assertEquals("default", channels.defaultId());
    assertEquals(PaymentChannels.DEFAULT, channels.defaultId());
    assertTrue(channels.single());
    assertSame(a, channels.defaultChannel());
    assertSame(NONE, channels.get("default").callbacks());
    assertEquals(List.of("default"), List.copyOf(channels.ids()));
  }

  @Test
  void severalChannelsByIdWithTheirOwnReaders() {
    PaymentChannel a = channel("a");
    PaymentChannel b = channel("b");
    CallbackReader readerB = (header, body) -> new ChannelNotice("n", "o", "CHARGED", 1, null);
    PaymentChannels channels = PaymentChannels.builder().add("a", a, NONE).add("b-2", b, readerB).build("b-2");
    assertFalse(channels.single());
    assertEquals("b-2", channels.defaultId());
    assertSame(b, channels.defaultChannel());
    assertSame(a, channels.find("a").channel());
    assertSame(readerB, channels.find("b-2").callbacks());
    assertEquals(List.of("a", "b-2"), List.copyOf(channels.ids()));
    assertNull(channels.find("c"));
    assertNull(channels.find(null));
    assertThrows(IllegalArgumentException.class, () -> channels.get("c"));
    assertThrows(UnsupportedOperationException.class, () -> channels.ids().clear());
  }

  @Test
  void aMisconfiguredRegistryIsRefused() {
    PaymentChannel a = channel("a");
    assertThrows(IllegalArgumentException.class, () -> PaymentChannels.builder().add("a", a, NONE).add("a", a, NONE),
        "an id twice");
    assertThrows(IllegalArgumentException.class, () -> PaymentChannels.builder().add("a", a, NONE).build("b"),
        "a default that is not registered");
    for (String bad : new String[] {null, "", "A", "a/b", "-a", "a b", "x".repeat(33)}) {
      assertThrows(IllegalArgumentException.class, () -> PaymentChannels.builder().add(bad, a, NONE), String.valueOf(bad));
    }
    assertThrows(NullPointerException.class, () -> PaymentChannels.builder().add("a", null, NONE));
    assertThrows(NullPointerException.class, () -> PaymentChannels.builder().add("a", a, null));
  }

  private static PaymentChannel channel(String name) {
    return new PaymentChannel() {
      @Override
      public ChannelReply charge(ChargeRequest request) {
        throw new UnsupportedOperationException();
      }

      @Override
      public ChannelReply query(String merchantOrder) {
        throw new UnsupportedOperationException();
      }

      @Override
      public ChannelReply close(String merchantOrder) {
        throw new UnsupportedOperationException();
      }

      @Override
      public ChannelReply refund(RefundRequest request) {
        throw new UnsupportedOperationException();
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
