package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** What the load counts as a broken stock invariant after a run. */
class StockTest {
  @Test
  void aSoldOutSkuWithEveryUnitHeldIsFine() {
    // total, remaining, held or confirmed, order rows (cancelled ones too), units of live orders
    assertEquals(List.of(), new Load.Stock(100, 0, 100, 130, 100).broken());
    assertEquals(0, new Load.Stock(100, 0, 100, 130, 100).oversell());
  }

  @Test
  void moreLiveOrdersThanUnitsIsAnOversell() {
    Load.Stock s = new Load.Stock(100, 0, 100, 103, 103);

    assertEquals(3, s.oversell());
    assertTrue(s.broken().stream().anyMatch(b -> b.startsWith("oversell 3")), s.broken().toString());
  }

  @Test
  void unitsThatAreNeitherRemainingNorHeldBreakConservation() {
    List<String> broken = new Load.Stock(100, 10, 80, 80, 80).broken();

    assertEquals(1, broken.size(), broken.toString());
    assertTrue(broken.get(0).startsWith("conservation"), broken.toString());
    assertTrue(new Load.Stock(100, -1, 101, 101, 100).broken().stream().anyMatch(b -> b.startsWith("remaining -1")));
  }
}
