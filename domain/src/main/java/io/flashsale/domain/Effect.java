package io.flashsale.domain;

/**
 * What one activity did to an order, typed. Its {@link #label()} ("PAID", "DUPLICATE PAID",
 * "REJECTED kind must be …") is what workflow histories ({@link Step#effect()}) and the
 * notification table record, so a label, once written, keeps its spelling.
 */
public record Effect(Kind kind, String subject) {

  public enum Kind {
    PAYING,
    PAID,
    /** Paid after the reservation had lapsed: a new one was taken and confirmed. */
    PAID_REHELD,
    FAILED,
    UNKNOWN,
    CANCELLED,
    /** A cancel of an order that is already CANCELLED. */
    REPLAY_CANCEL,
    /** An expired reservation gave its unit back. */
    RELEASED,
    REFUNDING,
    /** Paid after FAILED or CANCELLED: the money goes back. */
    REFUNDING_ANOMALY,
    REFUNDED,
    AMOUNT_MISMATCH,
    /** The order is already where this answer leads (subject: its status). */
    DUPLICATE,
    /** The answer does not apply to the order's status (subject: the status). */
    IGNORED,
    /** Nothing to do in the order's status (subject: the status). */
    NOOP,
    /** Refused: a command in the wrong status, or a malformed notice (subject: status or reason). */
    REJECTED
  }

  public static Effect of(Kind kind) {
    return new Effect(kind, null);
  }

  public static Effect of(Kind kind, OrderStatus status) {
    return new Effect(kind, status.name());
  }

  public static Effect rejected(String reason) {
    return new Effect(Kind.REJECTED, reason);
  }

  public String label() {
    return subject == null ? kind.name() : kind.name() + " " + subject;
  }

  @Override
  public String toString() {
    return label();
  }
}
