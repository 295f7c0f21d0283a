package io.flashsale.api.representations;

/** Every error on the wire: a stable code and a message for people; never a stack trace. */
public record ErrorBody(String error, String message) {}
