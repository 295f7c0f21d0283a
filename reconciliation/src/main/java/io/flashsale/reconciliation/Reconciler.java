package io.flashsale.reconciliation;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.Shipments;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.paymentchannel.StatementRow;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.Inventory;
import io.flashsale.persistence.Notifications;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.reconciliation.ReconcileRules.LedgerEntry;
import io.flashsale.reconciliation.ReconcileRules.OrderLine;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reconciliation (docs/DESIGN.md §Reconciliation): every order against the channel's ledger and
 * its current reservation, then the global checks, then the fulfillment check against the
 * consumer's own shipments. Orders still in flight are counted as pending, not judged, up to the
 * pending age bound; an order needing attention is a finding whatever its status.
 */
public final class Reconciler {

  /** Optional check no database anchor can make: the workflow's own view of each order. */
  public interface WorkflowCheck {
    /** Called once before the orders are checked (e.g. to take one visibility listing). */
    default void begin() {}

    /** Returns mismatch lines (empty when the workflow agrees with the row). */
    List<String> check(String orderId, String workflowId, String status, int version);
  }

  /**
   * pending: orders counted, not judged; pendingSum: the amounts of every order whose money may
   * still move (aged ones too), the width of the channel_net range; pendingAged: PENDING_AGED
   * findings; attention: orders needing attention by stored reason; channelNet leaves out the
   * ledger rows of orders created after the snapshot.
   */
  public record Report(Map<String, Integer> classes, List<String> mismatches, int pending, long pendingSum,
      int pendingAged, Map<String, Integer> attention, long channelNet, long paidSum, int confirmed, int paid,
      long drift, List<String> notes) {

    public String summaryLine() {
      return "reconcile classes=" + classes + " mismatches=" + mismatches.size() + " pending=" + pending
          + " pending_sum=" + pendingSum + " pending_aged=" + pendingAged + " attention=" + attention
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

  private final Database db;
  private final OrderQueries orderQueries;
  /** Every registered channel: their ledgers are merged (an order is charged on its own channel only). */
  private final List<PaymentChannel> channels;
  /** The fulfillment consumer's shipments; null when no consumer is reachable (not checked). */
  private final Shipments shipments;
  /** How long an order may stay PAYING, UNKNOWN or REFUNDING before it is PENDING_AGED. */
  private final Duration pendingAgeBound;

  /** The default pending age bound, as {@code reconciliation.pendingAgeBound} has it. */
  public static final Duration DEFAULT_PENDING_AGE_BOUND = Duration.ofHours(1);

  public Reconciler(Database db, PaymentChannel channel) {
    this(db, channel, null);
  }

  public Reconciler(Database db, PaymentChannel channel, Shipments shipments) {
    this(db, List.of(channel), shipments, DEFAULT_PENDING_AGE_BOUND);
  }

  /** Reconciles against the ledgers of every registered channel, merged. */
  public Reconciler(Database db, PaymentChannels channels, Shipments shipments, Duration pendingAgeBound) {
    this(db, channels.ids().stream().map(id -> channels.get(id).channel()).toList(), shipments, pendingAgeBound);
  }

  private Reconciler(Database db, List<PaymentChannel> channels, Shipments shipments, Duration pendingAgeBound) {
    this.db = db;
    this.orderQueries = new OrderQueries(db);
    this.channels = List.copyOf(channels);
    this.shipments = shipments;
    this.pendingAgeBound = java.util.Objects.requireNonNull(pendingAgeBound);
  }

  private record Snapshot(List<OrderLine> orders, int confirmed, long drift, List<String> operatorSettled) {}

  public Report run(WorkflowCheck workflows) throws IOException, InterruptedException {
    // the database first, as one snapshot; then the ledger. Money moves before the status that
    // records it (PAYING is committed before the charge, the refund before REFUNDED), so a
    // judged order's ledger rows are already there when the ledger is read after it.
    Snapshot snap = db.inTx(c -> {
      c.setTransactionIsolation(java.sql.Connection.TRANSACTION_REPEATABLE_READ);
      return new Snapshot(loadOrders(c), Inventory.countConfirmed(c), Inventory.drift(c), Notifications.operatorSettled(c));
    });
    if (workflows != null) workflows.begin();
    Map<String, LedgerEntry> ledger = new HashMap<>();
    List<StatementRow> statement = new ArrayList<>();
    for (PaymentChannel channel : channels) statement.addAll(channel.statement());
    for (StatementRow row : statement) {
      LedgerEntry l = ledger.getOrDefault(row.merchantOrder(), LedgerEntry.NONE);
      switch (row.movement()) {
        case CHARGE -> ledger.put(row.merchantOrder(), l.plusCharge(row.amount()));
        case REFUND -> ledger.put(row.merchantOrder(), l.plusRefund(row.amount()));
        case OTHER -> { } // not money this reconciliation judges
      }
    }
    // the consumer's own record, read after the snapshot like the ledger: ship counts only grow
    Map<String, Integer> shipped = shipments == null ? null : shipments.shipCounts();
    List<OrderLine> orders = snap.orders();
    Map<String, Integer> classes = new TreeMap<>();
    List<String> mismatches = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    int pending = 0;
    int inFlight = 0;
    long pendingSum = 0;
    int pendingAged = 0;
    Map<String, Integer> attention = new TreeMap<>();
    int paidWithoutEvent = 0;
    int paid = 0;
    long paidSum = 0;
    for (OrderLine o : orders) {
      classes.merge(o.status(), 1, Integer::sum);
      LedgerEntry l = ledger.getOrDefault(o.orderId(), LedgerEntry.NONE);
      ReconcileRules.Verdict verdict = ReconcileRules.judge(o, l, pendingAgeBound);
      boolean moved = ReconcileRules.chargedAfterSnapshot(verdict) && movedSinceSnapshot(o);
      if (moved) verdict = ReconcileRules.movedOn(verdict);
      if (verdict.pending()) pending++;
      if (moved || ReconcileRules.moneyInFlight(o)) {
        inFlight++;
        pendingSum += o.amount();
      }
      if (verdict.flags().contains(ReconcileRules.Flag.PENDING_AGED)) pendingAged++;
      if (o.needsAttention()) attention.merge(o.attention(), 1, Integer::sum);
      if (OrderStatus.PAID.name().equals(o.status())) {
        paid++;
        paidSum += o.amount();
        if (verdict.flags().contains(ReconcileRules.Flag.PAID_WITHOUT_EVENT)) paidWithoutEvent++;
      }
      if (!verdict.flags().isEmpty()) mismatches.add(orderLine(o, l, verdict.flags(), pendingAgeBound));
      if (workflows != null) mismatches.addAll(workflowFindings(workflows, o));
    }
    java.util.Set<String> known = new java.util.HashSet<>();
    for (OrderLine o : orders) known.add(o.orderId());
    // a ledger row of an order not in the snapshot: created after it (left out of channel_net), or an orphan
    java.util.Set<String> createdAfter = new java.util.HashSet<>();
    for (String order : ledger.keySet()) {
      if (!known.contains(order) && orderQueries.exists(order)) createdAfter.add(order);
    }
    int confirmed = snap.confirmed();
    long drift = snap.drift();
    ReconcileRules.Totals totals = new ReconcileRules.Totals(paid, paidSum, inFlight, pendingSum, paidWithoutEvent,
        confirmed, drift);
    for (ReconcileRules.GlobalFinding f : ReconcileRules.global(ledger, known::contains, createdAfter::contains, totals)) {
      mismatches.add(f.line());
    }
    if (shipped == null) {
      notes.add("fulfillment not checked: no fulfillment consumer in this process");
    } else {
      Map<String, String> statusOf = new HashMap<>();
      for (OrderLine o : orders) statusOf.put(o.orderId(), o.status());
      List<ReconcileRules.FulfillmentFinding> found = ReconcileRules.fulfillment(shipped);
      notes.add("fulfillment shipped=" + shipped.size() + " shipped_more_than_once=" + found.size());
      for (ReconcileRules.FulfillmentFinding f : found) {
        mismatches.add(f.orderId() + " " + statusOf.getOrDefault(f.orderId(), "(after snapshot)") + " " + f.flag()
            + " shipped=" + f.shipCount());
      }
    }
    // the operator's path skips the callback signature by design: every payment it settled is listed
    notes.add("settled by an operator signal: " + snap.operatorSettled().size()
        + (snap.operatorSettled().isEmpty() ? "" : " " + String.join(", ", snap.operatorSettled())));
    long channelNet = ReconcileRules.channelNet(ledger, createdAfter::contains);
    return new Report(classes, mismatches, pending, pendingSum, pendingAged, attention, channelNet, paidSum, confirmed,
        paid, drift, notes);
  }

  /**
   * An order's mismatch line: {@code <order> <status> <FLAG>[,<FLAG>…] charged= refunded= reservation=},
   * then {@code in_status=<n>s bound=<n>s} for PENDING_AGED and {@code attention=<reason>
   * since=<instant> detail=<text>} for NEEDS_ATTENTION (the detail last: it is free text).
   */
  static String orderLine(OrderLine o, LedgerEntry l, List<ReconcileRules.Flag> flags, Duration pendingAgeBound) {
    StringBuilder sb = new StringBuilder().append(o.orderId()).append(' ').append(o.status()).append(' ')
        .append(flags.stream().map(Enum::name).collect(java.util.stream.Collectors.joining(",")))
        .append(" charged=").append(l.charged()).append(" refunded=").append(l.refunded())
        .append(" reservation=").append(o.reservationStatus());
    if (flags.contains(ReconcileRules.Flag.PENDING_AGED)) {
      sb.append(" in_status=").append(o.inStatus().toSeconds()).append("s bound=")
          .append(pendingAgeBound.toSeconds()).append('s');
    }
    if (flags.contains(ReconcileRules.Flag.NEEDS_ATTENTION)) {
      sb.append(" attention=").append(o.attention()).append(" since=").append(o.attentionSince())
          .append(" detail=").append(o.attentionDetail());
    }
    return sb.toString();
  }

  /** A CREATED, FAILED or CANCELLED order the ledger shows charged: has its row moved on since the snapshot? */
  private boolean movedSinceSnapshot(OrderLine o) {
    OrderQueries.StatusAndVersion now = orderQueries.statusAndVersion(o.orderId());
    return now != null && now.version() != o.version();
  }

  /**
   * The workflow's view against the row. An order that moved between the snapshot and the query
   * is looked at again with its current row before anything is flagged.
   */
  private List<String> workflowFindings(WorkflowCheck workflows, OrderLine o) {
    List<String> found = workflows.check(o.orderId(), o.workflowId(), o.status(), o.version());
    if (found.isEmpty()) return found;
    OrderQueries.StatusAndVersion now = orderQueries.statusAndVersion(o.orderId());
    if (now == null || (now.status().equals(o.status()) && now.version() == o.version())) return found;
    return workflows.check(o.orderId(), o.workflowId(), now.status(), now.version());
  }

  private static List<OrderLine> loadOrders(java.sql.Connection c) throws java.sql.SQLException {
    List<OrderLine> out = new ArrayList<>();
    for (OrderQueries.ReconcileLine l : OrderQueries.reconcileLines(c)) {
      out.add(new OrderLine(l.orderId(), l.status(), l.amount(), l.reservationStatus(), l.workflowId(), l.version(),
          l.paidEventWritten(), l.inStatus(), l.attention(), l.attentionDetail(), l.attentionSince()));
    }
    return out;
  }
}
