package io.flashsale.tools;

import static io.flashsale.domain.OrderStatus.CREATED;
import static io.flashsale.domain.OrderStatus.PAID;
import static io.flashsale.domain.OrderStatus.PAYING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.dropwizard.jackson.Jackson;
import io.flashsale.api.representations.OrderBody;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries.TimelineEntry;
import io.flashsale.reconciliation.Reconciler;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the demo reads from the service and prints: its verdict taken from the reconciliation
 * report the reconciler writes, and the result table built from the order body the API serves.
 */
class DemoScriptTest {

  // ---- the verdict, from the reconciler's own report text

  @Test
  void aReportWithNothingPendingAndNoMismatchIsClean() {
    Reconciler.Report report = report(0, List.of());

    assertTrue(report.clean(), "fixture: the reconciler calls it clean");
    assertTrue(DemoScript.converged(report.text()));
    assertTrue(DemoScript.clean(report.text()));
  }

  @Test
  void anOrderStillInFlightIsNotConvergedYet() {
    String text = report(1, List.of()).text();

    assertFalse(DemoScript.converged(text));
    assertFalse(DemoScript.clean(text));
  }

  @Test
  void aMismatchMakesTheDemoFailOnceConverged() {
    String text = report(0, List.of("ord-0003 PAID_WITHOUT_CHARGE")).text();

    assertTrue(DemoScript.converged(text));
    assertFalse(DemoScript.clean(text));
  }

  @Test
  void tenPendingOrTenMismatchesAreNotReadAsZero() {
    List<String> tenMismatches = List.of("m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10");

    assertFalse(DemoScript.converged(report(10, List.of()).text()));
    assertFalse(DemoScript.clean(report(0, tenMismatches).text()));
  }

  /** A report as the reconciler builds it after the demo's sale: 3 paid, 1 failed, 1 cancelled. */
  private static Reconciler.Report report(int pending, List<String> mismatches) {
    return new Reconciler.Report(Map.of("PAID", 3, "FAILED", 1, "CANCELLED", 1), mismatches, pending, 0, 0, Map.of(), 5970, 5970,
        3, 3, 0, List.of("workflows checked=5"));
  }

  // ---- the table

  @Test
  void theTimelineOfAnOrderBodyReadsAsItsTransitions() {
    JsonNode body = Jackson.newObjectMapper().valueToTree(OrderBody.of(new OrderDetails("ord-0001", "t1", "buyer-1",
        "demo-1-buyer-1", PAID, 3, "sku-demo", 1, 1990, null, "ord-0001/r1", "CONFIRMED", "order-ord-0001",
        "2026-11-30T10:00:00Z", List.of(
            new TimelineEntry(null, CREATED, 1, "create", "2026-11-30T10:00:00Z"),
            new TimelineEntry(CREATED, PAYING, 2, "pay", "2026-11-30T10:00:01Z"),
            new TimelineEntry(PAYING, PAID, 3, "charge CHARGED", "2026-11-30T10:00:02Z")))));

    assertEquals(" [-->CREATED v1 create] [CREATED->PAYING v2 pay] [PAYING->PAID v3 charge CHARGED]",
        DemoScript.timeline(body));
  }

  @Test
  void aBuyerWithoutAnOrderShowsDashesInTheOrderAndPayColumns() {
    assertEquals("buyer-8  none                   SOLD_OUT  -         -          ",
        DemoScript.row("buyer-8", "none", "SOLD_OUT", null, null, ""));
  }

  @Test
  void everyRowLinesUpUnderTheHeader() {
    String header = DemoScript.row("buyer", "fault", "create", "order", "pay", "final / timeline");
    String row = DemoScript.row("buyer-3", "reply lost (1200 ms)", "CREATED", "ord-0003", "UNKNOWN", "PAID [..]");

    for (String[] column : new String[][] {{"fault", "reply lost"}, {"create", "CREATED"}, {"order", "ord-0003"},
        {"pay", "UNKNOWN"}, {"final", "PAID"}}) {
      assertEquals(header.indexOf(column[0]), row.indexOf(column[1]), column[0]);
    }
  }
}
