package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.tools.bench.Invariants.PaidOrders;
import io.flashsale.tools.bench.Invariants.Stock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the load counts as a broken invariant after a run, from plain counts. */
class InvariantsTest {
  private static final Duration WAITED = Duration.ofSeconds(120);
  /** total 100, all held, 130 order rows (30 cancelled), 100 units live: every invariant holds. */
  private static final Stock SOLD_OUT_FINE = new Stock(100, 0, 100, 130, 100);

  @Test
  void aSoldOutSkuWithEveryUnitHeldIsFine() {
    // total, remaining, held or confirmed, order rows (cancelled ones too), units of live orders
    assertEquals(List.of(), SOLD_OUT_FINE.broken());
    assertEquals(0, SOLD_OUT_FINE.oversell());
  }

  @Test
  void moreLiveOrdersThanUnitsIsAnOversell() {
    Stock s = new Stock(100, 0, 100, 103, 103);

    assertEquals(3, s.oversell());
    assertTrue(s.broken().stream().anyMatch(b -> b.startsWith("oversell 3")), s.broken().toString());
  }

  @Test
  void unitsThatAreNeitherRemainingNorHeldBreakConservation() {
    List<String> broken = new Stock(100, 10, 80, 80, 80).broken();

    assertEquals(1, broken.size(), broken.toString());
    assertTrue(broken.get(0).startsWith("conservation"), broken.toString());
    assertTrue(new Stock(100, -1, 101, 101, 100).broken().stream().anyMatch(b -> b.startsWith("remaining -1")));
  }

  @Test
  void everyCreatedAnswerNeedsItsOrderRow() {
    assertEquals(List.of(), Invariants.admission(SOLD_OUT_FINE, 130));
    assertEquals(List.of("131 CREATED answers but 130 order rows"), Invariants.admission(SOLD_OUT_FINE, 131));
    // a broken stock comes first, then the missing rows
    List<String> both = Invariants.admission(new Stock(100, 0, 100, 103, 103), 104);
    assertEquals(2, both.size(), both.toString());
    assertTrue(both.get(0).startsWith("oversell 3"), both.toString());
  }

  @Test
  void aSkuWithNoStockHasNoOrder() {
    assertEquals(List.of(), Invariants.soldOut(new Stock(0, 0, 0, 0, 0)));
    assertEquals(List.of("2 orders on a SKU with no stock"), Invariants.soldOut(new Stock(0, 0, 0, 2, 0)));
  }

  @Test
  void theJdbcCeilingHasExactlyOneRowPerCreated() {
    Stock s = new Stock(200, 100, 100, 100, 100);

    assertEquals(List.of(), Invariants.ceiling(s, 100));
    assertEquals(List.of("99 CREATED but 100 order rows"), Invariants.ceiling(s, 99));
    assertEquals(List.of("101 CREATED but 100 order rows"), Invariants.ceiling(s, 101));
  }

  @Test
  void everyBuyerOfTheCrowdIsSentGetsADefiniteAnswerAndHasARowForAUnit() {
    Stock s = new Stock(500, 0, 500, 500, 500);

    assertEquals(List.of(), Invariants.crowd(s, 2000, 2000, 0, 500, "{}"));
    assertEquals(List.of("3 buyers without a definite answer: {HTTP_503=3}", "5 buyers never sent",
        "501 CREATED or REPLAY answers but 500 order rows"),
        Invariants.crowd(s, 2000, 1995, 3, 501, "{HTTP_503=3}"));
  }

  @Test
  void everyAnsweredPayCallEnds() {
    java.util.Map<String, String> answers = java.util.Map.of("a", "PAID", "b", "UNKNOWN", "c", "UNKNOWN", "d", "PAID");
    assertEquals(List.of(), Invariants.everyPaidCallEnded(answers,
        java.util.Map.of("a", "PAID", "b", "PAID", "c", "FAILED", "d", "PAID"), WAITED));
    // an UNKNOWN left UNKNOWN, a row missing, and a pay answered PAID whose order ended FAILED
    assertEquals(List.of("2 paid orders neither PAID nor FAILED after 120 s",
            "orders whose pay answered PAID are not PAID: {FAILED=1, null=1}"),
        Invariants.everyPaidCallEnded(answers, java.util.Map.of("a", "FAILED", "b", "UNKNOWN", "c", "FAILED"), WAITED));
  }

  @Test
  void aPaidOrderHasOneTransitionOneEventAndAtMostOnePaidEffect() {
    assertEquals(List.of(), new PaidOrders(10, 0, 0, 0, 10).broken(false), "b2: the callback came as a duplicate");
    assertEquals(List.of("10 of 10 PAID orders without a PAID effect"), new PaidOrders(10, 0, 0, 0, 10).broken(true),
        "b3: only a notice could pay it");
    assertEquals(List.of("1 of 10 PAID orders without exactly one transition to PAID",
        "2 of 10 PAID orders without exactly one ORDER_PAID event", "3 of 10 PAID orders with more than one PAID effect"),
        new PaidOrders(10, 1, 2, 3, 0).broken(false));
  }

  @Test
  void everyNoticeOfTheStormIsAppliedAndEveryStormOrderPaid() {
    assertEquals(List.of(), Invariants.stormApplied(5000, 5000, 5000, 100, 100, WAITED));
    assertEquals(List.of("10 accepted notices without an effect after 120 s", "20 of 5010 arrivals without an effect",
        "1 of 100 storm orders not PAID"), Invariants.stormApplied(5000, 5010, 4990, 100, 99, WAITED));
  }
}
