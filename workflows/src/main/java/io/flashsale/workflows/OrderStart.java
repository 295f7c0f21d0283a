package io.flashsale.workflows;

/**
 * Start arguments. A fresh order starts with orderId null and is created by the create update;
 * a run started by signal-with-start for a known order carries its id and loads it.
 */
public record OrderStart(String tenant, String subject, String requestKey, String orderId, OrderSettings settings) {}
