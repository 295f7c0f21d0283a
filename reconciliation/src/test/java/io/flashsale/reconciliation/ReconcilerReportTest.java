package io.flashsale.reconciliation;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.flashsale.reconciliation.ReconcileRules.Flag;
import io.flashsale.reconciliation.ReconcileRules.LedgerEntry;
import io.flashsale.reconciliation.ReconcileRules.OrderLine;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The report's words: an order's mismatch line with its age or attention, and the summary line. */
class ReconcilerReportTest {
  private static final Duration BOUND = Duration.ofHours(1);

  @Test
  void anAgedOrderNamesItsStatusAndItsAge() {
    OrderLine o = new OrderLine("ord-0001", "UNKNOWN", 1990, "HELD", "w", 3, false, Duration.ofSeconds(3725), null,
        null, null);
    assertEquals("ord-0001 UNKNOWN PENDING_AGED charged=1990 refunded=0 reservation=HELD in_status=3725s bound=3600s",
        Reconciler.orderLine(o, new LedgerEntry(1, 1990, 0), List.of(Flag.PENDING_AGED), BOUND));
  }

  @Test
  void anOrderNeedingAttentionNamesTheReasonSinceWhenAndTheDetailLast() {
    OrderLine o = new OrderLine("ord-0002", "REFUNDING", 1990, "RELEASED", "w", 5, false, Duration.ofHours(2),
        "REFUND_REFUSED", "refund answered NOT_CHARGED", Instant.parse("2026-01-02T03:04:05Z"));
    assertEquals("ord-0002 REFUNDING PENDING_AGED,NEEDS_ATTENTION charged=1990 refunded=0 reservation=RELEASED"
            + " in_status=7200s bound=3600s attention=REFUND_REFUSED since=2026-01-02T03:04:05Z"
            + " detail=refund answered NOT_CHARGED",
        Reconciler.orderLine(o, new LedgerEntry(1, 1990, 0), List.of(Flag.PENDING_AGED, Flag.NEEDS_ATTENTION), BOUND));
    // counted by kind as the schedule's result has it
    assertEquals(Map.of("PENDING_AGED", 1, "NEEDS_ATTENTION", 1), ScheduledReconciliation.findingsByKind(
        List.of(Reconciler.orderLine(o, LedgerEntry.NONE, List.of(Flag.PENDING_AGED, Flag.NEEDS_ATTENTION), BOUND))));
  }

  @Test
  void theSummaryAddsThePendingSumTheAgedAndTheAttentionCountsBeforeTheMoney() {
    Reconciler.Report r = new Reconciler.Report(new java.util.TreeMap<>(Map.of("PAID", 1, "UNKNOWN", 2)), List.of("x", "y"), 1, 3980, 1,
        new java.util.TreeMap<>(Map.of("UNKNOWN_AGED", 1)), 3980, 1990, 1, 1, 0, List.of());
    assertEquals("reconcile classes={PAID=1, UNKNOWN=2} mismatches=2 pending=1 pending_sum=3980 pending_aged=1"
        + " attention={UNKNOWN_AGED=1} channel_net=3980 paid_sum=1990 confirmed=1 paid=1 drift=0", r.summaryLine());
  }
}
