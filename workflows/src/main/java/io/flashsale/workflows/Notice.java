package io.flashsale.workflows;

/**
 * A payment callback after the API recorded its arrival; notificationId is the
 * payment_notification row whose effect the workflow fills in.
 */
public record Notice(long notificationId, String notifyId, String kind, long amount, String txn) {}
