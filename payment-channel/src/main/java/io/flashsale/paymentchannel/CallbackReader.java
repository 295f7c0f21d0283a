package io.flashsale.paymentchannel;

import java.util.function.Function;

/**
 * A channel's callback format, the receiving side: verifies one callback (its signature, with the
 * channel's secrets) and reads the notice from its raw body. The API calls it before anything is
 * recorded, and only maps a refusal to its answer. Implementations live next to their channel's
 * adapter ({@code http.SignedJsonCallbacks} for the stub's format).
 */
public interface CallbackReader {

  /**
   * @param header the request's header of that name (case-insensitive), null when absent
   * @param body the raw body, exactly as received (a signature covers these bytes)
   * @return the notice, verified and validated
   * @throws CallbackRefusal when the callback is not verified or its body is not a notice
   */
  ChannelNotice read(Function<String, String> header, byte[] body) throws CallbackRefusal;
}
