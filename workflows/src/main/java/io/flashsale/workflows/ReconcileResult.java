package io.flashsale.workflows;

import java.util.List;
import java.util.Map;

/**
 * What one scheduled reconciliation found (docs/DESIGN.md §Reconciliation on a schedule): the
 * orders it repaired (they had no running workflow), then the report's findings counted by kind
 * (ORPHAN, WORKFLOW_MISMATCH, GLOBAL, ...). {@code clean}: no finding was left after the repair.
 * {@code repaired} names at most {@link #NAMED} orders (a lost engine can leave thousands, and a
 * payload is bounded); {@code repairedCount} counts them all.
 */
public record ReconcileResult(String outcome, boolean clean, int repairedCount, List<String> repaired,
    Map<String, Integer> findings, int pending, String summary) {

  public static final int NAMED = 50;

  /** Nothing repaired, nothing found. */
  public static final String CLEAN = "CLEAN";
  /** Orphans were repaired; the report after the repair found nothing else. */
  public static final String REPAIRED = "REPAIRED";
  /** The report still has findings: someone has to look (the memo and the report say which). */
  public static final String FINDINGS = "FINDINGS";

  public static ReconcileResult of(List<String> repaired, Map<String, Integer> findings, int pending, String summary) {
    boolean clean = findings.isEmpty();
    String outcome = !clean ? FINDINGS : repaired.isEmpty() ? CLEAN : REPAIRED;
    List<String> named = List.copyOf(repaired.subList(0, Math.min(NAMED, repaired.size())));
    return new ReconcileResult(outcome, clean, repaired.size(), named, new java.util.TreeMap<>(findings), pending,
        summary);
  }
}
