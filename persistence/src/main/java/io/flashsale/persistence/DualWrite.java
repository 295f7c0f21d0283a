package io.flashsale.persistence;

import io.flashsale.domain.OrderStatus;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Negative control C29-19 only: the dual write the outbox exists to avoid. An {@link OrderTx}
 * given one leaves the PAID event out of the order's transaction and keeps it here; after that
 * transaction committed, the caller writes it in a second one ({@link #writeHeld}). A process that
 * dies between the two has committed PAID and lost the event for good: a retry finds the order
 * PAID already and moves nothing.
 */
public final class DualWrite {
  private record Held(OrderRow row, OrderStatus to, int version) {}

  private final List<Held> held = new ArrayList<>();

  /** The PAID transition is the one whose event moves out of the transaction. */
  boolean takes(OrderStatus to) {
    return to == OrderStatus.PAID;
  }

  void hold(OrderRow row, OrderStatus to, int version) {
    held.add(new Held(row, to, version));
  }

  public boolean isEmpty() {
    return held.isEmpty();
  }

  /** The second transaction's work: the events held back from the first, which has committed. */
  public int writeHeld(Connection c) throws SQLException {
    for (Held h : held) Outbox.append(c, h.row(), h.to(), h.version());
    int written = held.size();
    held.clear();
    return written;
  }
}
