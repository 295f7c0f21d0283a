package io.flashsale.persistence;

/** One outbox row as it travels to the consumer. */
public record OutboxEvent(long eventId, String orderId, String eventType, int orderVersion, String payload) {}
