package io.flashsale.reconciliation;

import io.flashsale.domain.OrderStatus;

import io.flashsale.workflows.Orders;

import io.flashsale.persistence.Database;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
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

  private record Candidate(String orderId, String status, String workflowId, String tenant, String subject,
      String requestKey, String sku, String reservationStatus, Timestamp expiresAt) {}

  private final Database db;
  private final WorkflowServiceStubs service;
  private final String namespace;
  private final Orders orders;

  public OrphanRepair(Database db, WorkflowServiceStubs service, String namespace, Orders orders) {
    this.db = db;
    this.service = service;
    this.namespace = namespace;
    this.orders = orders;
  }

  public List<Repaired> run() {
    List<Repaired> repaired = new ArrayList<>();
    for (Candidate c : nonFinalOrders()) {
      String previous = runState(c.workflowId());
      if ("RUNNING".equals(previous)) continue;
      // the workflow may have finished the order between the read and the describe
      Candidate now = nonFinalOrder(c.orderId());
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

  private static final String NON_FINAL = "SELECT o.order_id, o.status, o.workflow_id, o.tenant, o.subject,"
      + " o.request_key, o.sku, r.status, r.expires_at FROM orders o"
      + " LEFT JOIN reservation r ON r.reservation_key = o.reservation_key"
      + " WHERE o.status IN (" + nonTerminalStatuses() + ")";

  /** The statuses a workflow still has work for, from the enum, so a new status is included by its own definition. */
  private static String nonTerminalStatuses() {
    return java.util.Arrays.stream(OrderStatus.values()).filter(s -> !s.isTerminal())
        .map(s -> "'" + s.name() + "'").collect(java.util.stream.Collectors.joining(", "));
  }

  private Candidate nonFinalOrder(String orderId) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(NON_FINAL + " AND o.order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? candidate(rs) : null;
        }
      }
    });
  }

  private static Candidate candidate(ResultSet rs) throws java.sql.SQLException {
    return new Candidate(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
        rs.getString(6), rs.getString(7), rs.getString(8), rs.getTimestamp(9));
  }

  private List<Candidate> nonFinalOrders() {
    return db.read(c -> {
      List<Candidate> out = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement(NON_FINAL + " ORDER BY o.order_id")) {
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) out.add(candidate(rs));
        }
      }
      return out;
    });
  }
}
