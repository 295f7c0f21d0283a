package io.flashsale.paymentchannel;

/**
 * One payment notice as a channel's callback reports it, verified and validated by the channel's
 * {@link CallbackReader}: the notice's id at the channel, the order (merchant order id), its kind
 * (CHARGED, DECLINED or REFUNDED), the amount in minor units and the channel's txn (may be null).
 */
public record ChannelNotice(String notifyId, String merchantOrder, String kind, long amount, String txn) {}
