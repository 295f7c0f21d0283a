package io.flashsale.reconciliation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.OrderStatus;
import io.flashsale.reconciliation.ReconcileRules.Flag;
import io.flashsale.reconciliation.ReconcileRules.FulfillmentFinding;
import io.flashsale.reconciliation.ReconcileRules.FulfillmentFlag;
import io.flashsale.reconciliation.ReconcileRules.GlobalFinding;
import io.flashsale.reconciliation.ReconcileRules.GlobalFlag;
import io.flashsale.reconciliation.ReconcileRules.LedgerEntry;
import io.flashsale.reconciliation.ReconcileRules.OrderLine;
import io.flashsale.reconciliation.ReconcileRules.Totals;
import io.flashsale.reconciliation.ReconcileRules.Verdict;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every reconciliation flag, raised on hand-built rows; consistent rows raise none. The cases are
 * tables, and a coverage test walks Flag.values() / GlobalFlag.values() over them: a flag added to
 * an enum without a case here (or one no rule can raise any more) fails the build.
 */
class ReconcileRulesTest {
  private static final long PRICE = 1990;
  private static final String ORDER = "ord-0001";
  private static final LedgerEntry NONE = LedgerEntry.NONE;
  private static final LedgerEntry CHARGED = new LedgerEntry(1, PRICE, 0);
  private static final LedgerEntry CHARGED_AND_REFUNDED = new LedgerEntry(1, PRICE, PRICE);
  private static final Duration BOUND = Duration.ofHours(1);

  private static OrderLine order(OrderStatus status, String reservation, boolean paidEvent) {
    return order(status.name(), reservation, paidEvent);
  }

  private static OrderLine order(String status, String reservation, boolean paidEvent) {
    return new OrderLine(ORDER, status, PRICE, reservation, "order:t:s:k", 3, paidEvent);
  }

  /** The order after inStatus in its status, marked with an attention reason (null: none). */
  private static OrderLine order(OrderStatus status, String reservation, Duration inStatus, String attention) {
    return new OrderLine(ORDER, status.name(), PRICE, reservation, "order:t:s:k", 3, false, inStatus, attention,
        attention == null ? null : "no definite answer for a round", attention == null ? null : Instant.EPOCH);
  }

  private static List<Flag> flags(OrderLine o, LedgerEntry l) {
    Verdict v = ReconcileRules.judge(o, l, BOUND);
    assertFalse(v.pending(), o.status() + " is judged");
    return v.flags();
  }

  // ---------------------------------------------------------------- one order

  /** One order and its ledger entry; expected is the one flag it raises, null for a consistent order. */
  record OrderCase(String name, OrderLine order, LedgerEntry ledger, Flag expected) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static OrderCase raises(Flag flag, String name, OrderLine o, LedgerEntry l) {
    return new OrderCase(flag + ": " + name, o, l, flag);
  }

  private static OrderCase clean(String name, OrderLine o, LedgerEntry l) {
    return new OrderCase("clean: " + name, o, l, null);
  }

  static final List<OrderCase> CLEAN_ORDERS = List.of(
      clean("paid, charged once, confirmed, event written", order(OrderStatus.PAID, "CONFIRMED", true), CHARGED),
      clean("refunded in full, stock released", order(OrderStatus.REFUNDED, "RELEASED", false), CHARGED_AND_REFUNDED),
      clean("failed, never charged", order(OrderStatus.FAILED, "RELEASED", false), NONE),
      clean("failed, charge refunded", order(OrderStatus.FAILED, "RELEASED", false), CHARGED_AND_REFUNDED),
      clean("failed without a reservation row", order(OrderStatus.FAILED, null, false), NONE),
      clean("cancelled, charge refunded", order(OrderStatus.CANCELLED, "RELEASED", false), CHARGED_AND_REFUNDED),
      clean("cancelled, never charged", order(OrderStatus.CANCELLED, "RELEASED", false), NONE),
      clean("refunded without a reservation row", order(OrderStatus.REFUNDED, null, false), CHARGED_AND_REFUNDED),
      clean("created, stock held", order(OrderStatus.CREATED, "HELD", false), NONE));

  static final List<OrderCase> FLAGGED_ORDERS = List.of(
      raises(Flag.PAID_WITHOUT_CHARGE, "no ledger row", order(OrderStatus.PAID, "CONFIRMED", true), NONE),
      raises(Flag.PAID_CHARGE_MISMATCH, "charged less", order(OrderStatus.PAID, "CONFIRMED", true),
          new LedgerEntry(1, PRICE - 1, 0)),
      raises(Flag.PAID_CHARGE_MISMATCH, "charged more", order(OrderStatus.PAID, "CONFIRMED", true),
          new LedgerEntry(1, PRICE + 1, 0)),
      raises(Flag.PAID_BUT_REFUNDED, "refund on a paid order", order(OrderStatus.PAID, "CONFIRMED", true),
          CHARGED_AND_REFUNDED),
      raises(Flag.PAID_WITHOUT_CONFIRMED_RESERVATION, "released", order(OrderStatus.PAID, "RELEASED", true), CHARGED),
      raises(Flag.PAID_WITHOUT_CONFIRMED_RESERVATION, "still held", order(OrderStatus.PAID, "HELD", true), CHARGED),
      raises(Flag.PAID_WITHOUT_CONFIRMED_RESERVATION, "no reservation row", order(OrderStatus.PAID, null, true), CHARGED),
      raises(Flag.PAID_WITHOUT_EVENT, "no ORDER_PAID event", order(OrderStatus.PAID, "CONFIRMED", false), CHARGED),
      raises(Flag.REFUNDED_LEDGER_MISMATCH, "never refunded", order(OrderStatus.REFUNDED, "RELEASED", false), CHARGED),
      raises(Flag.REFUNDED_LEDGER_MISMATCH, "never charged", order(OrderStatus.REFUNDED, "RELEASED", false), NONE),
      raises(Flag.REFUNDED_LEDGER_MISMATCH, "refunded in part", order(OrderStatus.REFUNDED, "RELEASED", false),
          new LedgerEntry(1, PRICE, PRICE - 1)),
      raises(Flag.REFUNDED_BUT_RESERVATION_HELD, "", order(OrderStatus.REFUNDED, "HELD", false), CHARGED_AND_REFUNDED),
      raises(Flag.REFUNDED_BUT_RESERVATION_CONFIRMED, "", order(OrderStatus.REFUNDED, "CONFIRMED", false),
          CHARGED_AND_REFUNDED),
      raises(Flag.CHARGED_BUT_FAILED, "charge kept", order(OrderStatus.FAILED, "RELEASED", false), CHARGED),
      raises(Flag.CHARGED_BUT_FAILED, "refunded in part", order(OrderStatus.FAILED, "RELEASED", false),
          new LedgerEntry(1, PRICE, 1)),
      raises(Flag.FAILED_BUT_RESERVATION_HELD, "", order(OrderStatus.FAILED, "HELD", false), NONE),
      raises(Flag.FAILED_BUT_RESERVATION_CONFIRMED, "", order(OrderStatus.FAILED, "CONFIRMED", false), NONE),
      raises(Flag.CHARGED_BUT_CANCELLED, "charge kept", order(OrderStatus.CANCELLED, "RELEASED", false), CHARGED),
      raises(Flag.CANCELLED_BUT_RESERVATION_HELD, "", order(OrderStatus.CANCELLED, "HELD", false), NONE),
      raises(Flag.CANCELLED_BUT_RESERVATION_CONFIRMED, "", order(OrderStatus.CANCELLED, "CONFIRMED", false), NONE),
      // a charge on an order nobody paid yet, even one refunded since
      raises(Flag.CHARGED_BUT_CREATED, "charged", order(OrderStatus.CREATED, "HELD", false), CHARGED),
      raises(Flag.CHARGED_BUT_CREATED, "charged and refunded", order(OrderStatus.CREATED, "HELD", false),
          CHARGED_AND_REFUNDED),
      raises(Flag.CREATED_WITHOUT_HELD, "released", order(OrderStatus.CREATED, "RELEASED", false), NONE),
      raises(Flag.CREATED_WITHOUT_HELD, "no reservation row", order(OrderStatus.CREATED, null, false), NONE),
      raises(Flag.PENDING_AGED, "UNKNOWN past the bound", order(OrderStatus.UNKNOWN, "HELD", BOUND.plusSeconds(1), null),
          NONE),
      raises(Flag.PENDING_AGED, "PAYING past the bound, charged", order(OrderStatus.PAYING, "HELD", Duration.ofDays(2),
          null), CHARGED),
      raises(Flag.PENDING_AGED, "REFUNDING past the bound", order(OrderStatus.REFUNDING, "RELEASED",
          BOUND.multipliedBy(3), null), CHARGED),
      raises(Flag.NEEDS_ATTENTION, "a young UNKNOWN order marked", order(OrderStatus.UNKNOWN, "HELD", Duration.ZERO,
          "UNKNOWN_AGED"), NONE),
      raises(Flag.NEEDS_ATTENTION, "a consistent PAID order marked", new OrderLine(ORDER, "PAID", PRICE, "CONFIRMED",
          "order:t:s:k", 3, true, Duration.ZERO, "DataError", "constraint", Instant.EPOCH), CHARGED),
      raises(Flag.NEEDS_ATTENTION, "a reason this version does not know", order(OrderStatus.REFUNDING, "RELEASED",
          Duration.ZERO, "SOMETHING_NEWER"), CHARGED),
      raises(Flag.UNRECOGNISED_STATUS, "order status", order("SHIPPED", "HELD", false), NONE),
      raises(Flag.UNRECOGNISED_STATUS, "reservation status", order(OrderStatus.PAID, "EXPIRED", true), CHARGED),
      // the stored text is compared as it is: a lower-case status is a hand-edited row too
      raises(Flag.UNRECOGNISED_STATUS, "lower case", order("paid", "CONFIRMED", true), CHARGED));

  static Stream<OrderCase> cleanOrders() {
    return CLEAN_ORDERS.stream();
  }

  static Stream<OrderCase> flaggedOrders() {
    return FLAGGED_ORDERS.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cleanOrders")
  void consistentOrdersRaiseNothing(OrderCase c) {
    assertEquals(List.of(), flags(c.order(), c.ledger()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("flaggedOrders")
  void eachCaseRaisesExactlyItsFlag(OrderCase c) {
    assertEquals(List.of(c.expected()), flags(c.order(), c.ledger()));
  }

  @Test
  void everyFlagIsRaisedBySomeCase() {
    // what judge actually raised over the table, not what the cases claim: an unreachable flag shows here
    Set<Flag> raised = EnumSet.noneOf(Flag.class);
    for (OrderCase c : FLAGGED_ORDERS) raised.addAll(ReconcileRules.judge(c.order(), c.ledger(), BOUND).flags());
    List<Flag> missing = Arrays.stream(Flag.values()).filter(f -> !raised.contains(f)).toList();
    assertEquals(List.of(), missing, "flags no case raises");
    assertEquals(EnumSet.allOf(Flag.class), raised);
  }

  @Test
  void ordersWithAPaymentInFlightAreCountedNotJudged() {
    for (OrderStatus s : OrderStatus.values()) {
      Verdict v = ReconcileRules.judge(order(s, null, false), new LedgerEntry(3, 1, 7), BOUND);
      assertEquals(s.isPending(), v.pending(), s.name());
      if (v.pending()) assertEquals(List.of(), v.flags(), s.name());
    }
  }

  @Test
  void aPendingOrderIsCountedUpToTheAgeBoundAndAFindingPastIt() {
    for (OrderStatus s : List.of(OrderStatus.PAYING, OrderStatus.UNKNOWN, OrderStatus.REFUNDING)) {
      assertEquals(new Verdict(true, List.of()), ReconcileRules.judge(order(s, "HELD", BOUND, null), NONE, BOUND),
          s + " at the bound");
      assertEquals(new Verdict(false, List.of(Flag.PENDING_AGED)),
          ReconcileRules.judge(order(s, "HELD", BOUND.plusMillis(1), null), NONE, BOUND), s + " past it");
      assertEquals(new Verdict(false, List.of(Flag.PENDING_AGED)),
          ReconcileRules.judge(order(s, "HELD", Duration.ofMinutes(6), null), NONE, Duration.ofMinutes(5)),
          s + " past a shorter bound");
    }
    // a settled order stays as long as it likes
    assertEquals(List.of(), flags(order(OrderStatus.CREATED, "HELD", Duration.ofDays(9), null), NONE));
  }

  @Test
  void anOrderNeedingAttentionIsAFindingWhateverItsStatus() {
    for (OrderStatus s : OrderStatus.values()) {
      Verdict v = ReconcileRules.judge(order(s, "HELD", Duration.ZERO, "REFUND_REFUSED"), CHARGED, BOUND);
      assertFalse(v.pending(), s.name());
      assertEquals(Flag.NEEDS_ATTENTION, v.flags().get(v.flags().size() - 1), s + ": " + v.flags());
    }
    assertEquals(List.of(Flag.PENDING_AGED, Flag.NEEDS_ATTENTION),
        flags(order(OrderStatus.REFUNDING, "RELEASED", Duration.ofDays(1), "REFUND_AGED"), CHARGED));
    assertEquals(List.of(Flag.UNRECOGNISED_STATUS, Flag.NEEDS_ATTENTION), flags(new OrderLine(ORDER, "SHIPPED", PRICE,
        "HELD", "w", 1, false, Duration.ZERO, "DataError", "d", Instant.EPOCH), NONE));
    assertEquals(List.of(Flag.CHARGED_BUT_FAILED, Flag.NEEDS_ATTENTION),
        flags(order(OrderStatus.FAILED, "RELEASED", Duration.ZERO, "REFUND_REFUSED"), CHARGED));
  }

  @Test
  void aChargeMadeAfterTheSnapshotIsInFlightOnceTheRowMovedOn() {
    Verdict created = ReconcileRules.judge(order(OrderStatus.CREATED, "HELD", false), CHARGED, BOUND);
    assertTrue(ReconcileRules.chargedAfterSnapshot(created));
    assertEquals(new Verdict(true, List.of()), ReconcileRules.movedOn(created));
    Verdict failed = ReconcileRules.judge(order(OrderStatus.FAILED, "HELD", false), CHARGED, BOUND);
    assertEquals(new Verdict(false, List.of(Flag.FAILED_BUT_RESERVATION_HELD)), ReconcileRules.movedOn(failed),
        "only the charge is explained");
    assertFalse(ReconcileRules.chargedAfterSnapshot(
        ReconcileRules.judge(order(OrderStatus.PAID, "CONFIRMED", true), NONE, BOUND)), "PAID moves no more");
    assertFalse(ReconcileRules.chargedAfterSnapshot(
        ReconcileRules.judge(order(OrderStatus.CANCELLED, "RELEASED", false), NONE, BOUND)));
  }

  @Test
  void flagsAddUpOnOneOrder() {
    assertEquals(List.of(Flag.PAID_WITHOUT_CHARGE, Flag.PAID_WITHOUT_CONFIRMED_RESERVATION, Flag.PAID_WITHOUT_EVENT),
        flags(order(OrderStatus.PAID, "HELD", false), NONE));
    assertEquals(List.of(Flag.PAID_CHARGE_MISMATCH, Flag.PAID_BUT_REFUNDED),
        flags(order(OrderStatus.PAID, "CONFIRMED", true), new LedgerEntry(2, 2 * PRICE, PRICE)));
    assertEquals(List.of(Flag.REFUNDED_LEDGER_MISMATCH, Flag.REFUNDED_BUT_RESERVATION_CONFIRMED),
        flags(order(OrderStatus.REFUNDED, "CONFIRMED", false), CHARGED));
    assertEquals(List.of(Flag.CHARGED_BUT_CANCELLED, Flag.CANCELLED_BUT_RESERVATION_HELD),
        flags(order(OrderStatus.CANCELLED, "HELD", false), CHARGED));
    assertEquals(List.of(Flag.CHARGED_BUT_CREATED, Flag.CREATED_WITHOUT_HELD),
        flags(order(OrderStatus.CREATED, "CONFIRMED", false), CHARGED));
  }

  // ---------------------------------------------------------------- across orders

  private static final Totals CLEAN = new Totals(1, PRICE, 0, 0, 0, 1, 0);
  private static final Map<String, LedgerEntry> ONE_PAID = Map.of(ORDER, CHARGED);

  /** A ledger and the totals over a snapshot that holds ORDER only; no order was created after it. */
  record GlobalCase(String name, Map<String, LedgerEntry> ledger, Totals totals, GlobalFlag expected) {
    @Override
    public String toString() {
      return name;
    }

    List<GlobalFlag> raised() {
      return ReconcileRules.global(ledger, ORDER::equals, id -> false, totals).stream()
          .map(GlobalFinding::flag).toList();
    }
  }

  private static GlobalCase raises(GlobalFlag flag, String name, Map<String, LedgerEntry> ledger, Totals t) {
    return new GlobalCase(flag + ": " + name, ledger, t, flag);
  }

  static final List<GlobalCase> FLAGGED_GLOBALLY = List.of(
      raises(GlobalFlag.MULTIPLE_CHARGES, "two charges netting the price", Map.of(ORDER, new LedgerEntry(2, PRICE, 0)),
          CLEAN),
      raises(GlobalFlag.LEDGER_WITHOUT_ORDER, "a refunded orphan nets to zero",
          Map.of(ORDER, CHARGED, "ord-0009", CHARGED_AND_REFUNDED), CLEAN),
      raises(GlobalFlag.CONFIRMED_NOT_PAID, "", ONE_PAID, new Totals(1, PRICE, 0, 0, 0, 2, 0)),
      raises(GlobalFlag.NET_NOT_PAID_SUM, "", ONE_PAID, new Totals(1, PRICE + 1, 0, 0, 0, 1, 0)),
      raises(GlobalFlag.PAID_WITHOUT_EVENT, "", ONE_PAID, new Totals(1, PRICE, 0, 0, 1, 1, 0)),
      raises(GlobalFlag.CONSERVATION_DRIFT, "more stock than sold", ONE_PAID, new Totals(1, PRICE, 0, 0, 0, 1, 3)),
      raises(GlobalFlag.CONSERVATION_DRIFT, "less stock than sold", ONE_PAID, new Totals(1, PRICE, 0, 0, 0, 1, -1)));

  static Stream<GlobalCase> flaggedGlobally() {
    return FLAGGED_GLOBALLY.stream();
  }

  @Test
  void aConsistentSnapshotRaisesNothingGlobally() {
    assertEquals(List.of(), new GlobalCase("one paid order", ONE_PAID, CLEAN, null).raised());
    assertEquals(List.of(), new GlobalCase("nothing sold", Map.of(), new Totals(0, 0, 0, 0, 0, 0, 0), null).raised());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("flaggedGlobally")
  void eachGlobalCaseRaisesExactlyItsFlag(GlobalCase c) {
    assertEquals(List.of(c.expected()), c.raised());
  }

  @Test
  void everyGlobalFlagIsRaisedBySomeCase() {
    Set<GlobalFlag> raised = EnumSet.noneOf(GlobalFlag.class);
    for (GlobalCase c : FLAGGED_GLOBALLY) raised.addAll(c.raised());
    List<GlobalFlag> missing = Arrays.stream(GlobalFlag.values()).filter(f -> !raised.contains(f)).toList();
    assertEquals(List.of(), missing, "global flags no case raises");
    assertEquals(EnumSet.allOf(GlobalFlag.class), raised);
  }

  // one PAID order (ORDER) and one pending order (PENDING) in the snapshot: the net at the channel
  // is anywhere in [paid_sum, paid_sum + pending_sum]
  private static final String PENDING = "ord-0002";
  private static final Totals ONE_PAID_ONE_PENDING = new Totals(1, PRICE, 1, PRICE, 0, 1, 0);

  private static List<GlobalFinding> withPending(LedgerEntry pending) {
    Map<String, LedgerEntry> ledger = pending == NONE ? ONE_PAID : Map.of(ORDER, CHARGED, PENDING, pending);
    return ReconcileRules.global(ledger, Set.of(ORDER, PENDING)::contains, id -> false, ONE_PAID_ONE_PENDING);
  }

  @Test
  void withAPaymentInFlightTheNetMayBeAnywhereFromPaidSumToPaidSumPlusPendingSum() {
    // an UNKNOWN order may have been charged, a REFUNDING one refunded: either is in the range
    assertEquals(List.of(), withPending(NONE), "the pending order not charged: net = paid_sum");
    assertEquals(List.of(), withPending(CHARGED), "the pending order charged: net = paid_sum + pending_sum");
    assertEquals(List.of(), withPending(CHARGED_AND_REFUNDED), "charged and refunded again");
  }

  @Test
  void withAPaymentInFlightANetOutsideTheRangeIsAFinding() {
    assertEquals(List.of(new GlobalFinding(GlobalFlag.NET_NOT_PAID_SUM,
            "GLOBAL channel_net=3981 not in [paid_sum=1990, paid_sum+pending_sum=3980]")),
        withPending(new LedgerEntry(1, PRICE + 1, 0)), "charged more than its amount");
    assertEquals(List.of(new GlobalFinding(GlobalFlag.NET_NOT_PAID_SUM,
            "GLOBAL channel_net=0 not in [paid_sum=1990, paid_sum+pending_sum=3980]")),
        withPending(new LedgerEntry(0, 0, PRICE)), "refunded without a charge");
    // the paid order never charged, nothing for the pending one: below paid_sum
    assertEquals(List.of(new GlobalFinding(GlobalFlag.NET_NOT_PAID_SUM,
            "GLOBAL channel_net=0 not in [paid_sum=1990, paid_sum+pending_sum=3980]")),
        ReconcileRules.global(Map.of(), Set.of(ORDER, PENDING)::contains, id -> false, ONE_PAID_ONE_PENDING));
  }

  @Test
  void withNothingInFlightTheNetIsComparedExactlyInTheOldWords() {
    assertEquals(List.of(new GlobalFinding(GlobalFlag.NET_NOT_PAID_SUM, "GLOBAL channel_net=1990 != paid_sum=0")),
        ReconcileRules.global(ONE_PAID, ORDER::equals, id -> false, new Totals(0, 0, 0, 0, 0, 0, 0)));
  }

  @Test
  void aLedgerRowOfAnOrderCreatedAfterTheSnapshotIsNoOrphanAndNotInTheNet() {
    // a sale goes on while the report runs: the new order's charge is in no total of the snapshot
    Map<String, LedgerEntry> ledger = Map.of(ORDER, CHARGED, "ord-0003", CHARGED);
    List<GlobalFinding> found = ReconcileRules.global(ledger, ORDER::equals, "ord-0003"::equals, CLEAN);
    assertTrue(found.isEmpty(), found.toString());
    found = ReconcileRules.global(ledger, Set.of(ORDER, PENDING)::contains, "ord-0003"::equals, ONE_PAID_ONE_PENDING);
    assertTrue(found.isEmpty(), found.toString());
    assertEquals(PRICE, ReconcileRules.channelNet(ledger, "ord-0003"::equals));
  }

  @Test
  void anOrphansMoneyIsInTheNet() {
    List<GlobalFlag> raised = ReconcileRules.global(Map.of(ORDER, CHARGED, "ord-0009", CHARGED), ORDER::equals,
        id -> false, CLEAN).stream().map(GlobalFinding::flag).toList();
    assertEquals(List.of(GlobalFlag.LEDGER_WITHOUT_ORDER, GlobalFlag.NET_NOT_PAID_SUM), raised);
  }

  // ---------------------------------------------------------------- fulfillment

  @Test
  void ordersShippedOnceRaiseNothing() {
    assertEquals(List.of(), ReconcileRules.fulfillment(Map.of(ORDER, 1, "ord-0002", 1)));
    assertEquals(List.of(), ReconcileRules.fulfillment(Map.of()));
  }

  @Test
  void anOrderShippedMoreThanOnceIsNamedWithItsCount() {
    assertEquals(List.of(new FulfillmentFinding("ord-0002", FulfillmentFlag.SHIPPED_MORE_THAN_ONCE, 2),
            new FulfillmentFinding("ord-0003", FulfillmentFlag.SHIPPED_MORE_THAN_ONCE, 3)),
        ReconcileRules.fulfillment(Map.of("ord-0003", 3, ORDER, 1, "ord-0002", 2)));
  }

  @Test
  void everyFulfillmentFlagIsRaisedBySomeCase() {
    Set<FulfillmentFlag> raised = EnumSet.noneOf(FulfillmentFlag.class);
    for (FulfillmentFinding f : ReconcileRules.fulfillment(Map.of(ORDER, 2))) raised.add(f.flag());
    assertEquals(EnumSet.allOf(FulfillmentFlag.class), raised);
  }
}
