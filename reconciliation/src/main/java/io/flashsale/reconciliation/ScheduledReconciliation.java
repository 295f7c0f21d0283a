package io.flashsale.reconciliation;

import io.flashsale.workflows.ReconcileActivities;
import io.flashsale.workflows.ReconcileResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The schedule's activity: orphan repair, then the report, as the admin task's {@code repair=true}
 * does, returned as counts rather than text (docs/DESIGN.md §Reconciliation on a schedule).
 */
public final class ScheduledReconciliation implements ReconcileActivities {
  private static final Logger log = LoggerFactory.getLogger(ScheduledReconciliation.class);

  private final Reconciler reconciler;
  /** A fresh audit per report: an audit keeps the one visibility listing it took for its report. */
  private final Supplier<Reconciler.WorkflowCheck> workflows;
  private final OrphanRepair repair;

  public ScheduledReconciliation(Reconciler reconciler, Supplier<Reconciler.WorkflowCheck> workflows,
      OrphanRepair repair) {
    this.reconciler = reconciler;
    this.workflows = workflows;
    this.repair = repair;
  }

  // one at a time per worker: a second would only read the same tables again
  @Override
  public synchronized ReconcileResult reconcileAndRepair() {
    try {
      List<OrphanRepair.Repaired> repaired = repair.run();
      repair.awaitLoaded(repaired, Duration.ofSeconds(15));
      Reconciler.Report report = reconciler.run(workflows.get());
      ReconcileResult result = ReconcileResult.of(repaired.stream().map(OrphanRepair.Repaired::orderId).toList(),
          findingsByKind(report.mismatches()), report.pending(), report.summaryLine());
      log.info("scheduled reconcile {}: repaired={} findings={} {}", result.outcome(), result.repairedCount(),
          result.findings(), report.summaryLine());
      return result;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e); // the channel's ledger did not answer: retried
    }
  }

  /**
   * The report's mismatch lines counted by kind: a line about an order reads
   * {@code <order> <status> <FLAG>[,<FLAG>...] ...}, a global one starts with GLOBAL.
   */
  static Map<String, Integer> findingsByKind(List<String> mismatches) {
    Map<String, Integer> kinds = new TreeMap<>();
    for (String line : mismatches) {
      String[] words = line.split(" ", 4);
      if (words[0].equals("GLOBAL")) {
        kinds.merge("GLOBAL", 1, Integer::sum);
      } else if (words.length >= 3) {
        for (String flag : words[2].split(",")) kinds.merge(flag, 1, Integer::sum);
      } else {
        kinds.merge("OTHER", 1, Integer::sum);
      }
    }
    return kinds;
  }
}
