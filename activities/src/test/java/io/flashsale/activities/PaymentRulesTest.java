package io.flashsale.activities;

import static io.flashsale.activities.Safeguards.Safeguard.CONFIRM_MUST_TAKE_EFFECT;
import static io.flashsale.activities.Safeguards.Safeguard.TIMEOUT_IS_UNKNOWN;
import static io.flashsale.activities.Safeguards.Safeguard.TRANSITION_PRECONDITION;
import static io.flashsale.domain.OrderStatus.CANCELLED;
import static io.flashsale.domain.OrderStatus.CREATED;
import static io.flashsale.domain.OrderStatus.FAILED;
import static io.flashsale.domain.OrderStatus.PAID;
import static io.flashsale.domain.OrderStatus.PAYING;
import static io.flashsale.domain.OrderStatus.REFUNDED;
import static io.flashsale.domain.OrderStatus.REFUNDING;
import static io.flashsale.domain.OrderStatus.UNKNOWN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.Effect;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.Inventory;
import io.flashsale.persistence.MigratedPostgres;
import io.flashsale.persistence.OrderRow;
import io.flashsale.persistence.OrderTransitions;
import io.flashsale.persistence.OrderTx;
import io.flashsale.persistence.Stock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What each channel answer does to an order from each status, to its reservation and to its SKU's
 * stock, on a real PostgreSQL; and, for each safeguard the rules hold, that switching it off lets
 * through exactly the damage it exists to stop.
 */
class PaymentRulesTest {
  private static final String TENANT = "t1";
  private static final long UNIT_PRICE = 1990;
  private static final Duration RESERVATION_TTL = Duration.ofMinutes(10);
  /** Every test builds its own SKUs and orders, so tests never share stock or rows. */
  private static final AtomicInteger NEXT_ID = new AtomicInteger();

  @RegisterExtension static final MigratedPostgres postgres = new MigratedPostgres();

  /** The rules as the worker is wired: every safeguard on. */
  private final PaymentRules rules = new PaymentRules(new Safeguards(), RESERVATION_TTL);

  // ---- a success (charge reply, query, close or CHARGED notice)

  @ParameterizedTest
  @EnumSource(names = {"CREATED", "PAYING", "UNKNOWN"})
  void successWhileTheUnitIsHeldConfirmsItAndPays(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("PAID", apply(rules, order, CHARGED));

    State after = order.state();
    assertMoved(before, after, PAID);
    assertEquals("CONFIRMED", after.reservationStatus(order.firstKey()));
    assertStock(before.stock().confirmingOne(), after.stock());
  }

  /** The arrival's shortcut (Notifications.recordArrival) answers a copy of a success from this flag alone. */
  @ParameterizedTest
  @EnumSource(OrderStatus.class)
  void aSuccessIsADuplicateExactlyWhereTheStatusSaysItIsSettledForACharge(OrderStatus from) {
    String effect = apply(rules, newOrder(from), CHARGED);
    assertEquals(from.isSettledForACharge(), effect.equals("DUPLICATE " + from), from + " answered " + effect);
  }

  /**
   * The charge a success settles the order with is kept on its row, whatever the move (PAID, PAID
   * after a new unit, REFUNDING): a later notice of that charge is answered at its arrival
   * (Notifications.recordArrival). A success that moves nothing leaves the row as it was (below).
   */
  @ParameterizedTest
  @EnumSource(names = {"CREATED", "PAYING", "UNKNOWN", "FAILED", "CANCELLED"})
  void theChargeThatSettlesAnOrderIsKeptOnIt(OrderStatus from) {
    Order held = newOrder(from);
    apply(rules, held, CHARGED);
    assertEquals(CHARGE_TXN, held.state().chargeTxn(), from + " settled by " + CHARGE_TXN);

    if (from == PAYING || from == UNKNOWN) {
      Order reheld = newOrder(from);
      expireReservation(reheld);
      assertEquals("PAID_REHELD", apply(rules, reheld, CHARGED));
      assertEquals(CHARGE_TXN, reheld.state().chargeTxn(), from + " re-reserved by " + CHARGE_TXN);

      Order resold = lateOrderWhoseUnitWasResold(from);
      assertEquals("REFUNDING", apply(rules, resold, CHARGED));
      assertEquals(CHARGE_TXN, resold.state().chargeTxn(), from + " refunding " + CHARGE_TXN);
    }
  }

  @ParameterizedTest
  @EnumSource(names = {"PAID", "REFUNDING", "REFUNDED"})
  void repeatedSuccessIsADuplicateAndChangesNothing(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("DUPLICATE " + from, apply(rules, order, CHARGED));

    assertUnchanged(before, order.state());
  }

  @ParameterizedTest
  @EnumSource(names = {"FAILED", "CANCELLED"})
  void successAfterTheOrderEndedUnpaidIsRefunded(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("REFUNDING_ANOMALY", apply(rules, order, CHARGED));

    State after = order.state();
    assertMoved(before, after, REFUNDING);
    // the unit went back on sale when the order ended; the refund takes nothing from stock
    assertEquals("RELEASED", after.reservationStatus(order.firstKey()));
    assertStock(before.stock(), after.stock());
  }

  @ParameterizedTest
  @EnumSource(names = {"PAYING", "UNKNOWN"})
  void successAfterTheUnitExpiredTakesANewUnitAndPays(OrderStatus from) {
    Order order = newOrder(from);
    expireReservation(order);
    State before = order.state();

    assertEquals("PAID_REHELD", apply(rules, order, CHARGED));

    State after = order.state();
    assertMoved(before, after, PAID);
    String reheld = order.id() + "/r2";
    assertEquals(reheld, after.order().reservationKey());
    assertEquals(2, after.order().reserveAttempt());
    assertEquals(Map.of(order.firstKey(), "RELEASED", reheld, "CONFIRMED"), after.reservations());
    assertStock(before.stock().sellingOneMore(), after.stock());
  }

  @ParameterizedTest
  @EnumSource(names = {"PAYING", "UNKNOWN"})
  void successAfterTheUnitExpiredAndWasSoldToSomeoneElseIsRefunded(OrderStatus from) {
    Order order = lateOrderWhoseUnitWasResold(from);
    State before = order.state();

    assertEquals("REFUNDING", apply(rules, order, CHARGED));

    State after = order.state();
    assertMoved(before, after, REFUNDING);
    assertEquals(order.firstKey(), after.order().reservationKey());
    assertEquals(before.reservations(), after.reservations()); // no new reservation
    assertStock(before.stock(), after.stock());
    assertEquals(1, paidUnits(order.sku()), "only the buyer holding the unit is paid");
  }

  @Test
  void newUnitForALateSuccessIgnoresThePerUserLimitBecauseTheBuyerAlreadyPaid() {
    String sku = newSku(3, 1);
    Order late = newOrder(sku, "buyer-limited", PAYING);
    expireReservation(late);
    // with the first unit back on sale the same buyer could buy again, up to the limit of one
    newOrder(sku, "buyer-limited", PAID);
    State before = late.state();

    assertEquals("PAID_REHELD", apply(rules, late, CHARGED));

    State after = late.state();
    assertMoved(before, after, PAID);
    assertStock(before.stock().sellingOneMore(), after.stock());
  }

  @ParameterizedTest
  @EnumSource(OrderStatus.class)
  void successForAnotherAmountChangesNothing(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("AMOUNT_MISMATCH", apply(rules, order, chargedFor(UNIT_PRICE + 1)));

    assertUnchanged(before, order.state());
  }

  // ---- declined, or the close answered CLOSED

  @ParameterizedTest
  @EnumSource(names = {"PAYING", "UNKNOWN"})
  void notChargedFailsTheOrderAndReturnsItsUnit(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("FAILED", apply(rules, order, NOT_CHARGED));

    State after = order.state();
    assertMoved(before, after, FAILED);
    assertEquals("RELEASED", after.reservationStatus(order.firstKey()));
    assertStock(before.stock().releasingOne(), after.stock());
  }

  @ParameterizedTest
  @EnumSource(names = {"PAYING", "UNKNOWN"})
  void notChargedAfterTheUnitExpiredFailsTheOrderWithoutReturningTheUnitTwice(OrderStatus from) {
    Order order = newOrder(from);
    expireReservation(order);
    State before = order.state();

    assertEquals("FAILED", apply(rules, order, NOT_CHARGED));

    State after = order.state();
    assertMoved(before, after, FAILED);
    assertStock(before.stock(), after.stock());
  }

  @Test
  void repeatedNotChargedIsADuplicateAndChangesNothing() {
    Order order = newOrder(FAILED);
    State before = order.state();

    assertEquals("DUPLICATE FAILED", apply(rules, order, NOT_CHARGED));

    assertUnchanged(before, order.state());
  }

  @ParameterizedTest
  @EnumSource(mode = EnumSource.Mode.EXCLUDE, names = {"PAYING", "UNKNOWN", "FAILED"})
  void notChargedWhenNoChargeIsAwaitedIsIgnored(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("IGNORED " + from, apply(rules, order, NOT_CHARGED));

    assertUnchanged(before, order.state());
  }

  // ---- refunded

  @Test
  void refundedCompletesARefundingOrder() {
    Order order = newOrder(REFUNDING);
    State before = order.state();

    assertEquals("REFUNDED", apply(rules, order, REFUNDED_ANSWER));

    State after = order.state();
    assertMoved(before, after, REFUNDED);
    assertStock(before.stock(), after.stock());
  }

  @ParameterizedTest
  @EnumSource(mode = EnumSource.Mode.EXCLUDE, names = "REFUNDING")
  void refundedForAnOrderNotBeingRefundedIsIgnored(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("IGNORED " + from, apply(rules, order, REFUNDED_ANSWER));

    assertUnchanged(before, order.state());
  }

  // ---- no definite answer (rule 2)

  @Test
  void noAnswerWhilePayingIsUnknownAndKeepsTheUnitHeld() {
    Order order = newOrder(PAYING);
    State before = order.state();

    assertEquals("UNKNOWN", apply(rules, order, NO_ANSWER));

    State after = order.state();
    assertMoved(before, after, UNKNOWN);
    assertEquals("HELD", after.reservationStatus(order.firstKey()));
    assertStock(before.stock(), after.stock());
  }

  @ParameterizedTest
  @EnumSource(mode = EnumSource.Mode.EXCLUDE, names = "PAYING")
  void noAnswerInAnyOtherStatusChangesNothing(OrderStatus from) {
    Order order = newOrder(from);
    State before = order.state();

    assertEquals("NOOP " + from, apply(rules, order, NO_ANSWER));

    assertUnchanged(before, order.state());
  }

  // ---- each safeguard switched off: the same input on a twin order does the damage

  @Test
  void withTimeoutIsUnknownOffNoAnswerFailsThePayingOrderAndPutsItsUnitBackOnSale() {
    Order guarded = newOrder(PAYING);
    Order unguarded = newOrder(PAYING);
    State before = unguarded.state();

    assertEquals("UNKNOWN", apply(rules, guarded, NO_ANSWER));
    assertEquals("FAILED", apply(rulesWithout(TIMEOUT_IS_UNKNOWN), unguarded, NO_ANSWER));

    assertEquals("HELD", guarded.state().reservationStatus(guarded.firstKey()));
    State after = unguarded.state();
    // the charge may still land: money taken for an order that says FAILED, its unit for sale again
    assertMoved(before, after, FAILED);
    assertEquals("RELEASED", after.reservationStatus(unguarded.firstKey()));
    assertStock(before.stock().releasingOne(), after.stock());
  }

  @Test
  void withConfirmMustTakeEffectOffALateSuccessIsPaidWithoutAUnit() {
    Order guarded = lateOrderWhoseUnitWasResold(PAYING);
    Order unguarded = lateOrderWhoseUnitWasResold(PAYING);
    State before = unguarded.state();

    assertEquals("REFUNDING", apply(rules, guarded, CHARGED));
    assertEquals("PAID", apply(rulesWithout(CONFIRM_MUST_TAKE_EFFECT), unguarded, CHARGED));

    assertEquals(1, paidUnits(guarded.sku()));
    State after = unguarded.state();
    assertMoved(before, after, PAID);
    assertEquals("RELEASED", after.reservationStatus(unguarded.firstKey()));
    assertStock(before.stock(), after.stock());
    // oversold: the stock tables still balance, but two orders are paid for the SKU's one unit
    assertEquals(1, after.stock().total());
    assertEquals(2, paidUnits(unguarded.sku()));
  }

  @ParameterizedTest
  @EnumSource(names = {"FAILED", "CANCELLED", "REFUNDING", "REFUNDED"})
  void withTransitionPreconditionOffASuccessPaysAnOrderThatMustNotBePaid(OrderStatus from) {
    Order guarded = newOrder(from);
    Order unguarded = newOrder(from);
    State before = unguarded.state();

    apply(rules, guarded, CHARGED);
    // only the status rule is off: the confirm still has to take effect, so a new unit is taken
    assertEquals("PAID_REHELD", apply(rulesWithout(TRANSITION_PRECONDITION), unguarded, CHARGED));

    assertEquals(0, paidUnits(guarded.sku()));
    State after = unguarded.state();
    assertMoved(before, after, PAID);
    assertEquals("RELEASED", after.reservationStatus(unguarded.firstKey()));
    assertEquals("CONFIRMED", after.reservationStatus(unguarded.id() + "/r2"));
    assertStock(before.stock().sellingOneMore(), after.stock());
    assertEquals(1, paidUnits(unguarded.sku()));
  }

  @Test
  void withTransitionPreconditionOffARepeatedSuccessPublishesPaidAgainOnASecondUnit() {
    Order guarded = newOrder(PAID);
    Order unguarded = newOrder(PAID);
    State guardedBefore = guarded.state();
    State before = unguarded.state();

    apply(rules, guarded, CHARGED);
    assertEquals("PAID_REHELD", apply(rulesWithout(TRANSITION_PRECONDITION), unguarded, CHARGED));

    assertUnchanged(guardedBefore, guarded.state());
    State after = unguarded.state();
    assertMoved(before, after, PAID);
    assertEquals(List.of("ORDER_PAID", "ORDER_PAID"), after.events());
    // one order, two confirmed units
    assertStock(before.stock().sellingOneMore(), after.stock());
    assertEquals(1, paidUnits(unguarded.sku()));
  }

  /** The SQL condition alone: with the row lock on, dropping it changes nothing. */
  @ParameterizedTest
  @EnumSource(names = {"CREATED", "PAYING", "UNKNOWN", "PAID", "FAILED", "CANCELLED", "REFUNDING", "REFUNDED"})
  void withConditionalWriteOffUnderTheRowLockASuccessDoesWhatItDoesWithIt(OrderStatus from) {
    Order guarded = newOrder(from);
    Order unguarded = newOrder(from);

    String expected = apply(rules, guarded, CHARGED);
    Safeguards off = new Safeguards();
    off.switchOff(Safeguards.Safeguard.CONDITIONAL_WRITE);
    String effect = postgres.db().inTx(c -> CHARGED.applyTo(new PaymentRules(off, RESERVATION_TTL),
        new OrderTx(c, unguarded.id(), true, false))).label();

    assertEquals(expected, effect);
    State after = unguarded.state();
    State guardedAfter = guarded.state();
    assertEquals(guardedAfter.transitions(), after.transitions());
    assertEquals(guardedAfter.events(), after.events());
    assertEquals(guardedAfter.order().status(), after.order().status());
    assertEquals(guardedAfter.order().version(), after.order().version());
    assertEquals(guardedAfter.reservations().size(), after.reservations().size());
    // both SKUs started alike (three units, one order), so the units must have moved alike
    assertStock(guardedAfter.stock(), after.stock());
  }

  // ---- answers, as OrderActivitiesImpl hands them to the rules

  @FunctionalInterface
  private interface Answer {
    Effect applyTo(PaymentRules rules, OrderTx tx) throws SQLException;
  }

  /** The channel's id of the charge every CHARGED answer here reports. */
  private static final String CHARGE_TXN = "txn-charged";
  private static final Answer CHARGED = (rules, tx) -> rules.onCharged(tx, tx.row().amount(), CHARGE_TXN, "charged");
  private static final Answer NOT_CHARGED = (rules, tx) -> rules.onNotCharged(tx, "charge DECLINED");
  private static final Answer REFUNDED_ANSWER = (rules, tx) -> rules.onRefunded(tx, "refund REFUNDED");
  private static final Answer NO_ANSWER = (rules, tx) -> rules.onNoAnswer(tx, "charge timed out");

  /** A CHARGED callback naming an amount of its own. */
  private static Answer chargedFor(long amount) {
    return (rules, tx) -> rules.onCharged(tx, amount, CHARGE_TXN, "callback CHARGED " + amount);
  }

  /** One transaction under the order's row lock, as every activity runs the rules. */
  private static String apply(PaymentRules rules, Order order, Answer answer) {
    return postgres.db().inTx(c -> answer.applyTo(rules, new OrderTx(c, order.id()))).label();
  }

  private static PaymentRules rulesWithout(Safeguards.Safeguard safeguard) {
    Safeguards safeguards = new Safeguards();
    safeguards.switchOff(safeguard);
    return new PaymentRules(safeguards, RESERVATION_TTL);
  }

  // ---- orders, built the way the service builds them

  private record Order(String id, String sku, String subject) {
    String firstKey() {
      return Inventory.firstReservationKey(id);
    }

    State state() {
      return stateOf(this);
    }
  }

  /** An order for one unit of a new SKU of three, brought to {@code status}. */
  private static Order newOrder(OrderStatus status) {
    return newOrder(newSku(3, 3), "buyer-" + NEXT_ID.incrementAndGet(), status);
  }

  private static String newSku(int total, int perUserLimit) {
    String sku = "sku-" + NEXT_ID.incrementAndGet();
    postgres.db().inTx(c -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO sku (tenant, sku, total, remaining, unit_price,"
          + " per_user_limit) VALUES (?, ?, ?, ?, ?, ?)")) {
        ps.setString(1, TENANT);
        ps.setString(2, sku);
        ps.setInt(3, total);
        ps.setInt(4, total);
        ps.setLong(5, UNIT_PRICE);
        ps.setInt(6, perUserLimit);
        return ps.executeUpdate();
      }
    });
    return sku;
  }

  /** As OrderActivitiesImpl.reserve (take the unit, hold it as r1, insert CREATED v1), then on to {@code status}. */
  private static Order newOrder(String sku, String subject, OrderStatus status) {
    String id = "ord-" + NEXT_ID.incrementAndGet();
    postgres.db().inTx(c -> {
      Inventory.Take taken = Inventory.take(c, TENANT, sku, subject, 1, perUserLimit(c, sku));
      require(taken == Inventory.Take.HELD, "no unit for " + id + ": " + taken);
      String key = Inventory.firstReservationKey(id);
      Inventory.hold(c, key, TENANT, sku, subject, 1, RESERVATION_TTL);
      OrderTransitions.insertCreated(c, new OrderRow(id, TENANT, subject, "req-" + id, "{}", sku, 1, UNIT_PRICE,
          CREATED, 1, key, 1, "order-" + id), null, "create");
      walkTo(new OrderTx(c, id), status);
      return null;
    });
    return new Order(id, sku, subject);
  }

  /** The usual way into each status, with what it does to the reservation. */
  private static void walkTo(OrderTx tx, OrderStatus status) throws SQLException {
    String key = tx.row().reservationKey();
    switch (status) {
      case CREATED -> { }
      case PAYING -> tx.move(PAYING, "pay");
      case UNKNOWN -> {
        walkTo(tx, PAYING);
        tx.move(UNKNOWN, "charge timed out");
      }
      case PAID -> {
        walkTo(tx, PAYING);
        require(Inventory.confirm(tx.c, key), "confirm " + key);
        tx.move(PAID, "charged");
      }
      case FAILED -> {
        walkTo(tx, PAYING);
        require(Inventory.release(tx.c, key), "release " + key);
        tx.move(FAILED, "declined");
      }
      case CANCELLED -> {
        require(Inventory.release(tx.c, key), "release " + key);
        tx.move(CANCELLED, "cancel");
      }
      case REFUNDING -> {
        walkTo(tx, CANCELLED);
        tx.move(REFUNDING, "charged after CANCELLED");
      }
      case REFUNDED -> {
        walkTo(tx, REFUNDING);
        tx.move(REFUNDED, "refund confirmed");
      }
    }
  }

  /** As OrderActivitiesImpl.expireReservation for PAYING / UNKNOWN: the unit back on sale, the status kept. */
  private static void expireReservation(Order order) {
    postgres.db().inTx(c -> {
      require(Inventory.release(c, order.firstKey()), "release " + order.firstKey());
      return null;
    });
  }

  /** An order on a SKU of one unit whose reservation expired and whose unit another buyer then paid for. */
  private static Order lateOrderWhoseUnitWasResold(OrderStatus status) {
    String sku = newSku(1, 1);
    Order late = newOrder(sku, "buyer-" + NEXT_ID.incrementAndGet(), status);
    expireReservation(late);
    newOrder(sku, "buyer-" + NEXT_ID.incrementAndGet(), PAID);
    return late;
  }

  private static int perUserLimit(Connection c, String sku) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT per_user_limit FROM sku WHERE tenant = ? AND sku = ?")) {
      ps.setString(1, TENANT);
      ps.setString(2, sku);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /** A fixture that cannot be built is a broken test, not a failed expectation. */
  private static void require(boolean condition, String what) {
    if (!condition) throw new IllegalStateException("fixture: " + what);
  }

  // ---- what the tables say

  /** One SKU's units: the invariant is total = remaining + held + confirmed. */
  /** Everything the rules may touch for one order: its row, reservations, history, events and SKU stock. */
  private record State(OrderRow order, String chargeTxn, Map<String, String> reservations, List<String> transitions,
      List<String> events, Stock stock) {
    String reservationStatus(String key) {
      return reservations.get(key);
    }
  }

  private static State stateOf(Order o) {
    return postgres.db().read(c -> new State(
        OrderRow.get(c, o.id()),
        strings(c, "SELECT charge_txn FROM orders WHERE order_id = ?", o.id()).get(0),
        reservationsOf(c, o.id()),
        strings(c, "SELECT coalesce(from_status, '') || '->' || to_status FROM order_transition WHERE order_id = ?"
            + " ORDER BY version", o.id()),
        strings(c, "SELECT event_type FROM outbox WHERE order_id = ? ORDER BY event_id", o.id()),
        Stock.of(c, TENANT, o.sku())));
  }

  private static Map<String, String> reservationsOf(Connection c, String orderId) throws SQLException {
    Map<String, String> byKey = new TreeMap<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT reservation_key, status FROM reservation WHERE reservation_key LIKE ?")) {
      ps.setString(1, orderId + "/%");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) byKey.put(rs.getString(1), rs.getString(2));
      }
    }
    return byKey;
  }


  /** Units of the SKU that orders say are paid for. */
  private static int paidUnits(String sku) {
    return postgres.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT coalesce(sum(quantity), 0) FROM orders"
          + " WHERE tenant = ? AND sku = ? AND status = 'PAID'")) {
        ps.setString(1, TENANT);
        ps.setString(2, sku);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getInt(1);
        }
      }
    });
  }

  private static List<String> strings(Connection c, String sql, String arg) throws SQLException {
    List<String> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, arg);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.add(rs.getString(1));
      }
    }
    return out;
  }

  // ---- assertions

  /** Exactly one transition to {@code to}: version up by one, its history row, and its event if terminal. */
  private static void assertMoved(State before, State after, OrderStatus to) {
    assertEquals(to, after.order().status());
    assertEquals(before.order().version() + 1, after.order().version());
    List<String> transitions = new ArrayList<>(before.transitions());
    transitions.add(before.order().status() + "->" + to);
    assertEquals(transitions, after.transitions());
    List<String> events = new ArrayList<>(before.events());
    if (to.isTerminal()) events.add("ORDER_" + to);
    assertEquals(events, after.events());
    assertTrue(after.stock().balanced(), "total = remaining + held + confirmed: " + after.stock());
  }

  /** Order row, reservations, history, events and stock all as they were. */
  private static void assertUnchanged(State before, State after) {
    assertEquals(before, after);
    assertTrue(after.stock().balanced(), "total = remaining + held + confirmed: " + after.stock());
  }

  private static void assertStock(Stock expected, Stock actual) {
    assertEquals(expected, actual);
    assertTrue(actual.balanced(), "total = remaining + held + confirmed: " + actual);
  }
}
