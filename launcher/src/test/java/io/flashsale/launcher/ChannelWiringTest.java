package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flashsale.paymentchannel.CallbackRefusal;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.persistence.OrderQueries;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The configured channel is registered as the default under the id new orders get from the
 * database ({@code orders.channel}'s default, V9), with the stub's callback format and its secrets.
 */
class ChannelWiringTest {

  @Test
  void theConfiguredChannelIsTheDefaultOneUnderTheDatabasesDefaultId() {
    FlashsaleConfiguration.ChannelSettings settings = new FlashsaleConfiguration.ChannelSettings();
    settings.merchantKey = "merchant-key";
    PaymentChannels channels = Assembly.channels(settings, "http://127.0.0.1:1", "http://127.0.0.1:2/callbacks/payment");
    assertEquals(List.of(PaymentChannels.DEFAULT), List.copyOf(channels.ids()));
    assertEquals(OrderQueries.DEFAULT_CHANNEL, channels.defaultId(), "a create's channel is one that is registered");
  }

  @Test
  void withoutACallbackSecretItsCallbacksAreRefused() {
    FlashsaleConfiguration.ChannelSettings settings = new FlashsaleConfiguration.ChannelSettings();
    settings.merchantKey = "merchant-key";
    PaymentChannels channels = Assembly.channels(settings, "http://127.0.0.1:1", "http://127.0.0.1:2/callbacks/payment");
    CallbackRefusal r = assertThrows(CallbackRefusal.class,
        () -> channels.defaultEntry().callbacks().read(name -> null, "{}".getBytes()));
    assertEquals(401, r.status());
    assertEquals("BAD_SIGNATURE", r.code());
  }
}
