package io.flashsale.paymentchannel;

/** Refund once per refund key: the channel answers a repeat with the first refund's result. */
public record RefundRequest(String merchantOrder, String refundKey, long amount) {}
