package io.flashsale.activities;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reconciliation (docs/DESIGN.md §Reconciliation): every order against the channel's ledger and
 * its current reservation, then the global checks. Orders still in flight are counted as pending,
 * not judged.
 */
public final class Reconciler {

  /** Optional check no database anchor can make: the workflow's own view of each order. */
  public interface WorkflowCheck {
    /** Called once before the orders are checked (e.g. to take one visibility listing). */
    default void begin() {}

    /** Returns mismatch lines (empty when the workflow agrees with the row). */
    List<String> check(String orderId, String workflowId, String status, int version);
  }

  public record Report(Map<String, Integer> classes, List<String> mismatches, int pending, long channelNet,
      long paidSum, int confirmed, int paid, long drift, List<String> notes) {

    public String summaryLine() {
      return "reconcile classes=" + classes + " mismatches=" + mismatches.size() + " pending=" + pending
          + " channel_net=" + channelNet + " paid_sum=" + paidSum + " confirmed=" + confirmed + " paid=" + paid
          + " drift=" + drift;
    }

    public String text() {
      StringBuilder sb = new StringBuilder();
      for (String n : notes) sb.append(n).append('\n');
      for (String m : mismatches) sb.append("mismatch ").append(m).append('\n');
      return sb.append(summaryLine()).append('\n').toString();
    }

    public boolean clean() {
      return mismatches.isEmpty() && drift == 0;
    }
  }

  private record OrderLine(String orderId, String status, long amount, String reservationStatus, String workflowId,
      int version, boolean hasPaidEvent) {}

  private static final class Ledger {
    int charges;
    long charged;
    long refunded;
  }

  private final Database db;
  private final ChannelClient channel;

  public Reconciler(Database db, ChannelClient channel) {
    this.db = db;
    this.channel = channel;
  }

  private record Snapshot(List<OrderLine> orders, int confirmed, long drift) {}

  public Report run(WorkflowCheck workflows) throws IOException, InterruptedException {
    // the database first, as one snapshot; then the ledger. Money moves before the status that
    // records it (PAYING is committed before the charge, the refund before REFUNDED), so a
    // judged order's ledger rows are already there when the ledger is read after it.
    Snapshot snap = db.inTx(c -> {
      c.setTransactionIsolation(java.sql.Connection.TRANSACTION_REPEATABLE_READ);
      return new Snapshot(loadOrders(c), countConfirmed(c), drift(c));
    });
    if (workflows != null) workflows.begin();
    Map<String, Ledger> ledger = new HashMap<>();
    for (JsonNode row : channel.statement().path("rows")) {
      Ledger l = ledger.computeIfAbsent(row.path("merchant_order").asText(), k -> new Ledger());
      long amount = row.path("amount").asLong();
      if ("CHARGE".equals(row.path("type").asText())) {
        l.charges++;
        l.charged += amount;
      } else if ("REFUND".equals(row.path("type").asText())) {
        l.refunded += amount;
      }
    }
    List<OrderLine> orders = snap.orders();
    Map<String, Integer> classes = new TreeMap<>();
    List<String> mismatches = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    int pending = 0;
    int paidWithoutEvent = 0;
    int paid = 0;
    long paidSum = 0;
    for (OrderLine o : orders) {
      classes.merge(o.status(), 1, Integer::sum);
      Ledger l = ledger.getOrDefault(o.orderId(), new Ledger());
      String res = o.reservationStatus();
      List<String> flags = new ArrayList<>();
      switch (o.status()) {
        case "PAID" -> {
          paid++;
          paidSum += o.amount();
          if (l.charged == 0) flags.add("PAID_WITHOUT_CHARGE");
          else if (l.charged != o.amount()) flags.add("PAID_CHARGE_MISMATCH");
          if (l.refunded > 0) flags.add("PAID_BUT_REFUNDED");
          if (!"CONFIRMED".equals(res)) flags.add("PAID_WITHOUT_CONFIRMED_RESERVATION");
          if (!o.hasPaidEvent()) {
            flags.add("PAID_WITHOUT_EVENT");
            paidWithoutEvent++;
          }
        }
        case "REFUNDED" -> {
          if (l.charged != o.amount() || l.refunded != o.amount()) flags.add("REFUNDED_LEDGER_MISMATCH");
          if ("HELD".equals(res) || "CONFIRMED".equals(res)) flags.add("REFUNDED_BUT_RESERVATION_" + res);
        }
        case "FAILED", "CANCELLED" -> {
          if (l.charged - l.refunded != 0) flags.add("CHARGED_BUT_" + o.status());
          if ("HELD".equals(res) || "CONFIRMED".equals(res)) flags.add(o.status() + "_BUT_RESERVATION_" + res);
        }
        case "CREATED" -> {
          if (l.charged > 0) flags.add("CHARGED_BUT_CREATED");
          if (!"HELD".equals(res)) flags.add("CREATED_WITHOUT_HELD");
        }
        default -> pending++;
      }
      if (!flags.isEmpty()) {
        mismatches.add(o.orderId() + " " + o.status() + " " + String.join(",", flags) + " charged=" + l.charged
            + " refunded=" + l.refunded + " reservation=" + res);
      }
      if (workflows != null) mismatches.addAll(workflowFindings(workflows, o));
    }
    // global checks
    for (Map.Entry<String, Ledger> e : ledger.entrySet()) {
      if (e.getValue().charges > 1) mismatches.add("GLOBAL multiple charges for " + e.getKey() + ": " + e.getValue().charges);
    }
    java.util.Set<String> known = new java.util.HashSet<>();
    for (OrderLine o : orders) known.add(o.orderId());
    for (String mo : ledger.keySet()) {
      // an order created after the snapshot is not an orphan: look again before flagging
      if (!known.contains(mo) && !orderExists(mo)) mismatches.add("GLOBAL ledger rows without an order: " + mo);
    }
    long channelNet = ledger.values().stream().mapToLong(l -> l.charged - l.refunded).sum();
    int confirmed = snap.confirmed();
    if (confirmed != paid) mismatches.add("GLOBAL confirmed=" + confirmed + " != paid=" + paid);
    if (pending == 0 && channelNet != paidSum) {
      mismatches.add("GLOBAL channel_net=" + channelNet + " != paid_sum=" + paidSum);
    }
    if (paidWithoutEvent > 0) {
      mismatches.add("GLOBAL PAID orders without ORDER_PAID outbox event: " + paidWithoutEvent);
    }
    long drift = snap.drift();
    if (drift != 0) mismatches.add("GLOBAL conservation drift=" + drift);
    return new Report(classes, mismatches, pending, channelNet, paidSum, confirmed, paid, drift, notes);
  }

  /**
   * The workflow's view against the row. An order that moved between the snapshot and the query
   * is looked at again with its current row before anything is flagged.
   */
  private List<String> workflowFindings(WorkflowCheck workflows, OrderLine o) {
    List<String> found = workflows.check(o.orderId(), o.workflowId(), o.status(), o.version());
    if (found.isEmpty()) return found;
    String[] now = db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT status, version FROM orders WHERE order_id = ?")) {
        ps.setString(1, o.orderId());
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? new String[] {rs.getString(1), rs.getString(2)} : null;
        }
      }
    });
    if (now == null || (now[0].equals(o.status()) && Integer.parseInt(now[1]) == o.version())) return found;
    return workflows.check(o.orderId(), o.workflowId(), now[0], Integer.parseInt(now[1]));
  }

  private boolean orderExists(String orderId) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM orders WHERE order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next();
        }
      }
    });
  }

  private static List<OrderLine> loadOrders(java.sql.Connection c) throws java.sql.SQLException {
    List<OrderLine> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT o.order_id, o.status, o.amount, r.status, o.workflow_id, o.version,"
            + " EXISTS (SELECT 1 FROM outbox e WHERE e.order_id = o.order_id AND e.event_type = 'ORDER_PAID')"
            + " FROM orders o LEFT JOIN reservation r ON r.reservation_key = o.reservation_key ORDER BY o.order_id");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(new OrderLine(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getString(4), rs.getString(5),
            rs.getInt(6), rs.getBoolean(7)));
      }
    }
    return out;
  }

  private static int countConfirmed(java.sql.Connection c) throws java.sql.SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM reservation WHERE status = 'CONFIRMED'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Σ over SKUs of total − (remaining + held + confirmed); 0 when no unit was lost or made up. */
  private static long drift(java.sql.Connection c) throws java.sql.SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT coalesce(sum(abs(s.total - s.remaining - coalesce(r.used, 0))), 0) FROM sku s LEFT JOIN"
            + " (SELECT tenant, sku, sum(quantity) AS used FROM reservation WHERE status IN ('HELD', 'CONFIRMED')"
            + "  GROUP BY tenant, sku) r ON r.tenant = s.tenant AND r.sku = s.sku");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
