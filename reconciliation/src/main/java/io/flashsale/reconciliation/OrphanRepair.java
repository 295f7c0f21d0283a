package io.flashsale.reconciliation;

import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.workflows.Orders;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every non-final order needs a running workflow, or nothing converges it: after a restart of the
 * in-memory engine (which keeps nothing), or a workflow lost any other way (terminated by hand,
 * an engine that lost its state). Each orphan gets a new run that loads the order from the
 * database and carries on: the reservation expires at its stored deadline, a PAYING order whose
 * charge answer went with the old run becomes UNKNOWN and is converged by query.
 */
public final class OrphanRepair {
  private static final Logger log = LoggerFactory.getLogger(OrphanRepair.class);

  /** One repaired order: what it was and what was started for it. */
  public record Repaired(String orderId, String status, String workflowId, String previousRun) {
    public String line() {
      return "repaired " + orderId + " " + status + " workflow " + workflowId + " (was " + previousRun + ")";
    }
  }

  private final OrderQueries orderQueries;
  private final WorkflowServiceStubs service;
  private final String namespace;
  private final Orders orders;

  public OrphanRepair(Database db, WorkflowServiceStubs service, String namespace, Orders orders) {
    this.orderQueries = new OrderQueries(db);
    this.service = service;
    this.namespace = namespace;
    this.orders = orders;
  }

  public List<Repaired> run() {
    List<Repaired> repaired = new ArrayList<>();
    for (OrderQueries.NonFinal c : orderQueries.nonFinal()) {
      String previous = runState(c.workflowId());
      if ("RUNNING".equals(previous)) continue;
      // the workflow may have finished the order between the read and the describe
      OrderQueries.NonFinal now = orderQueries.nonFinal(c.orderId());
      if (now == null) continue;
      // -1: the reservation is no longer held (released or confirmed), no expiry timer to set
      long expiresAt = "HELD".equals(now.reservationStatus()) && now.expiresAt() != null
          ? now.expiresAt().getTime() : -1L;
      if (!orders.resume(now.workflowId(), now.tenant(), now.subject(), now.requestKey(), now.orderId(), now.sku(),
          expiresAt)) {
        continue; // a run started meanwhile
      }
      Repaired r = new Repaired(now.orderId(), now.status(), now.workflowId(), previous);
      try (var mdc = org.slf4j.MDC.putCloseable(io.flashsale.domain.LogKeys.ORDER_ID, c.orderId())) {
        log.warn("order {} {} had no running workflow ({}): started a new run that loads it", c.orderId(), c.status(),
            previous);
      }
      repaired.add(r);
    }
    return repaired;
  }

  /**
   * Waits (bounded) until each resumed run has loaded its order, so a reconciliation right after
   * the repair judges the loaded workflow, not one still starting.
   */
  public void awaitLoaded(List<Repaired> repaired, java.time.Duration bound) throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    for (Repaired r : repaired) {
      while (!orders.loaded(r.workflowId()) && System.nanoTime() < deadline) Thread.sleep(100);
    }
  }

  /** RUNNING, COMPLETED, ... or NONE. */
  private String runState(String workflowId) {
    return WorkflowRuns.latest(service, namespace, workflowId).map(WorkflowRuns::label).orElse("NONE");
  }
}
