package io.flashsale.persistence;

import io.flashsale.domain.Effect;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.Step;
import io.flashsale.domain.Transition;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/** One transaction on one locked order: tracks the row as it changes and the transitions made. */
public final class OrderTx {
  public final Connection c;
  private OrderRow row;
  private final boolean conditionalWrite;
  private final List<Transition> made = new ArrayList<>();
  /** Null except in the negative control C29-19: then the PAID event is written after the commit. */
  private final DualWrite dualWrite;

  public OrderTx(Connection c, String orderId) throws SQLException {
    this(c, orderId, true, true, null);
  }

  /** dualWrite non-null: negative control C29-19 only, the PAID event is left to a second transaction. */
  public OrderTx(Connection c, String orderId, DualWrite dualWrite) throws SQLException {
    this(c, orderId, true, true, dualWrite);
  }

  /**
   * Negative control C29-16 only: {@code lockRow} false reads the row without {@code FOR UPDATE},
   * {@code conditionalWrite} false writes without the {@code AND status = ? AND version = ?} guard.
   * Each one alone keeps a decision made on a row that has since moved from being written.
   */
  public OrderTx(Connection c, String orderId, boolean lockRow, boolean conditionalWrite) throws SQLException {
    this(c, orderId, lockRow, conditionalWrite, null);
  }

  /** Every switch; production passes all on (lock, conditional write, no dual write). */
  public OrderTx(Connection c, String orderId, boolean lockRow, boolean conditionalWrite, DualWrite dualWrite)
      throws SQLException {
    this.c = c;
    this.conditionalWrite = conditionalWrite;
    this.dualWrite = dualWrite;
    this.row = lockRow ? OrderRow.lock(c, orderId) : OrderRow.read(c, orderId);
  }

  public OrderRow row() {
    return row;
  }

  public OrderStatus status() {
    return row.status();
  }

  /** A transition that must take effect: the row is locked, so a rejection is a bug and rolls back. */
  public void move(OrderStatus to, String cause) throws SQLException {
    move(to, cause, null);
  }

  /** A move a charge made: its transaction id is kept on the row ({@link OrderTransitions#apply}). */
  public void move(OrderStatus to, String cause, String chargeTxn) throws SQLException {
    boolean eventLater = dualWrite != null && dualWrite.takes(to);
    Transition t = eventLater ? OrderTransitions.applyWithoutEvent(c, row, to, cause, chargeTxn)
        : conditionalWrite ? OrderTransitions.apply(c, row, to, cause, chargeTxn)
        : OrderTransitions.applyWithoutPrecondition(c, row, to, cause, chargeTxn);
    if (t == null) {
      throw new IllegalStateException("transition rejected " + row.orderId() + " " + row.status() + "->" + to);
    }
    if (eventLater) dualWrite.hold(row, to, t.version());
    row = row.with(to, t.version());
    made.add(t);
  }

  /** The order now holds its stock under a new reservation (a success that re-reserved). */
  public void reservationChanged(String key, int attempt) throws SQLException {
    OrderTransitions.reservationChanged(c, row.orderId(), key, attempt);
    row = row.withReservation(key, attempt);
  }

  public Step step(Effect effect) {
    return step(effect.label());
  }

  /** An effect recorded before (a retried activity answers what the first attempt did). */
  public Step step(String recordedEffect) {
    return new Step(recordedEffect, row.view(), List.copyOf(made));
  }
}
