package io.flashsale.persistence;

import static io.flashsale.domain.OrderStatus.CANCELLED;
import static io.flashsale.domain.OrderStatus.CREATED;
import static io.flashsale.domain.OrderStatus.PAID;
import static io.flashsale.domain.OrderStatus.PAYING;
import static io.flashsale.domain.OrderStatus.UNKNOWN;
import static io.flashsale.persistence.TestOrders.CREATE_CAUSE;
import static io.flashsale.persistence.TestOrders.TENANT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.Step;
import io.flashsale.domain.Transition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The one status writer on a real PostgreSQL: a move from a stale view of the order changes
 * nothing; a move that lands bumps the version by one and writes exactly one transition row (and,
 * into a terminal status, one outbox event) in the caller's transaction, so a rollback undoes all.
 */
class OrderTransitionsTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  /** Every test moves orders of its own. */
  private static final AtomicInteger NEXT_ORDER = new AtomicInteger();

  /** Everything stored about one order: its status and every record its moves wrote. */
  private record Stored(OrderStatus status, int version, List<Transition> transitions, List<OutboxEvent> outbox) {}

  private record OutboxEvent(String type, int orderVersion) {}

  // ---- a move that lands

  @ParameterizedTest
  @EnumSource(names = {"PAYING", "UNKNOWN", "REFUNDING"})
  void aMoveBumpsTheVersionByOneAndRecordsOneTransition(OrderStatus pending) {
    OrderRow order = newOrder();

    Transition moved = pg.db().inTx(c -> OrderTransitions.apply(c, order, pending, "move"));

    assertEquals(new Transition(CREATED, pending, 2, "move"), moved);
    assertEquals(new Stored(pending, 2, List.of(creation(), moved), List.of()), stored(order));
  }

  @ParameterizedTest
  @EnumSource(names = {"PAID", "FAILED", "CANCELLED", "REFUNDED"})
  void aMoveIntoATerminalStatusAlsoWritesOneOutboxEvent(OrderStatus terminal) {
    OrderRow order = newOrder();

    Transition moved = pg.db().inTx(c -> OrderTransitions.apply(c, order, terminal, "end"));

    assertEquals(new Transition(CREATED, terminal, 2, "end"), moved);
    assertEquals(new Stored(terminal, 2, List.of(creation(), moved), List.of(new OutboxEvent("ORDER_" + terminal, 2))),
        stored(order));
  }

  // ---- a move from a stale view: refused, never an overwrite

  @Test
  void aMoveFromAViewAnotherWriterOvertookIsRefused() {
    OrderRow seen = newOrder();
    move(seen, PAYING); // another writer got there first

    assertRefused(seen); // still CREATED v1 in this view
  }

  @Test
  void aMoveFromAStatusTheOrderNoLongerHasIsRefusedEvenAtItsVersion() {
    OrderRow paying = move(newOrder(), PAYING);

    assertRefused(paying.with(CREATED, paying.version()));
  }

  @Test
  void aMoveFromAVersionTheOrderNoLongerHasIsRefusedEvenInItsStatus() {
    OrderRow paying = move(newOrder(), PAYING);

    assertRefused(paying.with(PAYING, paying.version() - 1));
  }

  /** The refusal comes from the condition alone: the same stale move without it overwrites. */
  @Test
  void withoutItsPreconditionTheSameStaleMoveOverwrites() {
    OrderRow seen = newOrder();
    move(seen, PAYING);

    Transition overwrote = pg.db().inTx(c -> OrderTransitions.applyWithoutPrecondition(c, seen, CANCELLED, "late"));

    assertEquals(new Transition(CREATED, CANCELLED, 3, "late"), overwrote);
    assertEquals(CANCELLED, stored(seen).status());
  }

  private static void assertRefused(OrderRow stale) {
    Stored before = stored(stale);

    // into a terminal status, so a wrongful write would show in the outbox too
    assertNull(pg.db().inTx(c -> OrderTransitions.apply(c, stale, CANCELLED, "stale cancel")));

    assertEquals(before, stored(stale));
  }

  // ---- one transaction

  @Test
  void aRolledBackMoveLeavesNoStatusTransitionOrOutboxEvent() {
    OrderRow order = newOrder();
    Stored before = stored(order);
    RuntimeException laterFailure = new RuntimeException("a later step of the same transaction failed");
    List<Stored> seenInside = new ArrayList<>();

    RuntimeException thrown = assertThrows(RuntimeException.class, () -> pg.db().inTx(c -> {
      new OrderTx(c, order.orderId()).move(PAID, "charged");
      seenInside.add(stored(c, order.orderId()));
      throw laterFailure;
    }));

    assertSame(laterFailure, thrown);
    // the move did write all three inside the transaction, and the rollback took all three back
    assertEquals(List.of(new Stored(PAID, 2, List.of(creation(), new Transition(CREATED, PAID, 2, "charged")),
        List.of(new OutboxEvent("ORDER_PAID", 2)))), seenInside);
    assertEquals(before, stored(order));
  }

  // ---- OrderTx: one locked order

  @Test
  void orderTxFollowsItsRowAndReportsTheTransitionsItMade() {
    OrderRow order = newOrder();

    Step step = pg.db().inTx(c -> {
      OrderTx tx = new OrderTx(c, order.orderId());
      tx.move(PAYING, "pay");
      tx.move(UNKNOWN, "charge timed out");
      return tx.step("UNKNOWN");
    });

    List<Transition> made = List.of(new Transition(CREATED, PAYING, 2, "pay"),
        new Transition(PAYING, UNKNOWN, 3, "charge timed out"));
    assertEquals(made, step.transitions());
    assertEquals(UNKNOWN, step.order().status());
    assertEquals(3, step.order().version());
    assertEquals(new Stored(UNKNOWN, 3, prepend(creation(), made), List.of()), stored(order));
  }

  @Test
  void orderTxRefusesAMoveOnceItsRowWentStaleAndTheWholeTransactionRollsBack() {
    OrderRow order = newOrder();
    Stored before = stored(order);

    assertThrows(IllegalStateException.class, () -> pg.db().inTx(c -> {
      OrderTx tx = new OrderTx(c, order.orderId());
      tx.move(PAYING, "pay");
      // the lock keeps other transactions out, so only a write in this one can pass OrderTx by
      OrderTransitions.apply(c, tx.row(), CANCELLED, "written past the OrderTx");
      tx.move(UNKNOWN, "charge timed out");
      return null;
    }));

    assertEquals(before, stored(order));
  }

  // ---- the dual write of negative control C29-19

  @Test
  void aDualWriteCommitsPaidWithoutItsEventAndWritesTheEventOnlyInASecondTransaction() {
    OrderRow paying = move(newOrder(), PAYING);
    DualWrite dualWrite = new DualWrite();

    pg.db().inTx(c -> {
      OrderTx tx = new OrderTx(c, paying.orderId(), dualWrite);
      tx.move(PAID, "charged");
      return null;
    });

    Transition paid = new Transition(PAYING, PAID, 3, "charged");
    List<Transition> all = List.of(creation(), new Transition(CREATED, PAYING, 2, "move"), paid);
    // committed: the order is PAID with no event; a crash here loses the event for good
    assertEquals(new Stored(PAID, 3, all, List.of()), stored(paying));

    assertEquals(1, pg.db().inTx(dualWrite::writeHeld));
    assertEquals(new Stored(PAID, 3, all, List.of(new OutboxEvent("ORDER_PAID", 3))), stored(paying));
    assertEquals(0, pg.db().inTx(dualWrite::writeHeld), "written once");
  }

  @Test
  void aDualWriteLeavesEveryOtherMoveAsItWas() {
    DualWrite dualWrite = new DualWrite();
    OrderRow order = newOrder();

    pg.db().inTx(c -> {
      new OrderTx(c, order.orderId(), dualWrite).move(CANCELLED, "expired");
      return null;
    });

    assertEquals(List.of(new OutboxEvent("ORDER_CANCELLED", 2)), stored(order).outbox());
    assertTrue(dualWrite.isEmpty(), "nothing held back");
  }

  // ---- helpers

  private static OrderRow newOrder() {
    String orderId = String.format("ord-%04d", NEXT_ORDER.incrementAndGet());
    return TestOrders.create(pg.db(), orderId, TENANT, "buyer-" + orderId);
  }

  /** Moves the order in a transaction of its own; returns the row as it then is. */
  private static OrderRow move(OrderRow order, OrderStatus to) {
    return pg.db().inTx(c -> {
      OrderTx tx = new OrderTx(c, order.orderId());
      tx.move(to, "move");
      return tx.row();
    });
  }

  private static Transition creation() {
    return new Transition(null, CREATED, 1, CREATE_CAUSE);
  }

  private static List<Transition> prepend(Transition first, List<Transition> rest) {
    List<Transition> all = new ArrayList<>(List.of(first));
    all.addAll(rest);
    return all;
  }

  private static Stored stored(OrderRow order) {
    return pg.db().read(c -> stored(c, order.orderId()));
  }

  private static Stored stored(Connection c, String orderId) throws SQLException {
    OrderRow row = OrderRow.get(c, orderId);
    List<Transition> transitions = rows(c,
        "SELECT from_status, to_status, version, cause FROM order_transition WHERE order_id = ? ORDER BY id", orderId,
        rs -> new Transition(status(rs.getString(1)), status(rs.getString(2)), rs.getInt(3), rs.getString(4)));
    List<OutboxEvent> outbox = rows(c,
        "SELECT event_type, order_version FROM outbox WHERE order_id = ? ORDER BY event_id", orderId,
        rs -> new OutboxEvent(rs.getString(1), rs.getInt(2)));
    return new Stored(row.status(), row.version(), transitions, outbox);
  }

  private static OrderStatus status(String stored) {
    return stored == null ? null : OrderStatus.valueOf(stored);
  }

  @FunctionalInterface
  private interface RowReader<T> {
    T read(ResultSet rs) throws SQLException;
  }

  private static <T> List<T> rows(Connection c, String sql, String orderId, RowReader<T> reader) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, orderId);
      try (ResultSet rs = ps.executeQuery()) {
        List<T> out = new ArrayList<>();
        while (rs.next()) out.add(reader.read(rs));
        return out;
      }
    }
  }
}
