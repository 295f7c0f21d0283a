package io.flashsale.paymentchannel;

/** Charge once per merchant order: the channel answers a repeat with the first charge's result. */
public record ChargeRequest(String merchantOrder, long amount) {}
