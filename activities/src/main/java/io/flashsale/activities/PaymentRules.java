package io.flashsale.activities;

import io.flashsale.domain.Effect.Kind;
import io.flashsale.domain.Effect;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.Inventory;
import io.flashsale.persistence.OrderRow;
import io.flashsale.persistence.OrderTx;
import java.sql.SQLException;
import java.time.Duration;

/**
 * What a channel answer or notice does to a locked order (docs/DESIGN.md §State machine, rules
 * 2–5). Success from the charge reply, a query, a close or a callback all go through {@link #onCharged}.
 */
final class PaymentRules {
  private final Safeguards safeguards;
  /** How long a reservation taken again after a late payment is held (rule 4). */
  private final Duration reservationTtl;

  PaymentRules(Safeguards safeguards, Duration reservationTtl) {
    this.safeguards = safeguards;
    this.reservationTtl = reservationTtl;
  }

  /**
   * {@code txn}: the channel's id of this charge, kept on the row by the move it makes (null when
   * the answer carried none), so a later notice of the same charge is answered at its arrival.
   */
  Effect onCharged(OrderTx tx, long amount, String txn, String cause) throws SQLException {
    OrderRow o = tx.row();
    if (amount != o.amount()) return Effect.of(Kind.AMOUNT_MISMATCH);
    // a switch expression: a new status does not compile until its answer to a success is decided
    Effect settled = switch (o.status()) {
      case PAID, REFUNDING, REFUNDED -> Effect.of(Kind.DUPLICATE, o.status());
      case FAILED, CANCELLED -> Effect.of(Kind.REFUNDING_ANOMALY);
      case CREATED, PAYING, UNKNOWN -> null; // paid now, below
    };
    if (settled != null && !safeguards.on(Safeguards.Safeguard.TRANSITION_PRECONDITION)) {
      settled = null; // negative control C29-16 only: the success is applied from whatever status
    }
    if (settled != null) {
      if (settled.kind() == Kind.REFUNDING_ANOMALY) tx.move(OrderStatus.REFUNDING, cause + " after " + o.status(), txn);
      return settled;
    }
    // CREATED / PAYING / UNKNOWN: PAID only if the confirm took effect, in this transaction
    boolean confirmed = Inventory.confirm(tx.c, o.reservationKey());
    if (confirmed || !safeguards.on(Safeguards.Safeguard.CONFIRM_MUST_TAKE_EFFECT)) { // the switch: negative control C29-17 only
      tx.move(OrderStatus.PAID, cause, txn);
      return Effect.of(Kind.PAID);
    }
    int attempt = o.reserveAttempt() + 1;
    String key = o.orderId() + "/r" + attempt;
    Inventory.Take held = Inventory.reserve(tx.c, key, o.tenant(), o.sku(), o.subject(), o.quantity(), Integer.MAX_VALUE, reservationTtl);
    if (held == Inventory.Take.HELD && Inventory.confirm(tx.c, key)) {
      tx.reservationChanged(key, attempt);
      tx.move(OrderStatus.PAID, cause + " re-reserved " + key, txn);
      return Effect.of(Kind.PAID_REHELD);
    }
    tx.move(OrderStatus.REFUNDING, cause + " stock lost (" + held + ")", txn);
    return Effect.of(Kind.REFUNDING);
  }

  /** Declined, or the close answered CLOSED: FAILED and the unit back, same transaction. */
  Effect onNotCharged(OrderTx tx, String cause) throws SQLException {
    OrderStatus s = tx.status();
    // a switch expression: a new status does not compile until its answer to a refusal is decided
    return switch (s) {
      case PAYING, UNKNOWN -> {
        Inventory.release(tx.c, tx.row().reservationKey());
        tx.move(OrderStatus.FAILED, cause);
        yield Effect.of(Kind.FAILED);
      }
      case FAILED -> Effect.of(Kind.DUPLICATE, s);
      case CREATED, PAID, CANCELLED, REFUNDING, REFUNDED -> Effect.of(Kind.IGNORED, s);
    };
  }

  Effect onRefunded(OrderTx tx, String cause) throws SQLException {
    // a switch expression: a new status does not compile until its answer to a refund is decided
    return switch (tx.status()) {
      case REFUNDING -> {
        tx.move(OrderStatus.REFUNDED, cause);
        yield Effect.of(Kind.REFUNDED);
      }
      case CREATED, PAYING, UNKNOWN, PAID, FAILED, CANCELLED, REFUNDED -> Effect.of(Kind.IGNORED, tx.status());
    };
  }

  /** No definite answer: never a failure, never a release (rule 2). */
  Effect onNoAnswer(OrderTx tx, String cause) throws SQLException {
    // a switch expression: a new status does not compile until its answer to no answer is decided
    return switch (tx.status()) {
      case PAYING -> {
        if (!safeguards.on(Safeguards.Safeguard.TIMEOUT_IS_UNKNOWN)) { // negative control C29-14 only
          Inventory.release(tx.c, tx.row().reservationKey());
          tx.move(OrderStatus.FAILED, cause);
          yield Effect.of(Kind.FAILED);
        }
        tx.move(OrderStatus.UNKNOWN, cause);
        yield Effect.of(Kind.UNKNOWN);
      }
      case CREATED, UNKNOWN, PAID, FAILED, CANCELLED, REFUNDING, REFUNDED -> Effect.of(Kind.NOOP, tx.status());
    };
  }
}
