package io.flashsale.domain;

/** An order row as the workflow sees it after an activity. */
public record OrderView(
    String orderId,
    String tenant,
    String subject,
    String sku,
    int quantity,
    long amount,
    OrderStatus status,
    int version,
    String reservationKey) {}
