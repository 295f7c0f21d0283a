package io.flashsale.reconciliation;

import io.flashsale.domain.OrderStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The reconciliation rules (docs/DESIGN.md §Reconciliation) over plain values: no database, no
 * channel, so every flag can be shown on hand-built rows. {@link Reconciler} gathers the values.
 * A new order status makes {@link #judge} stop compiling until its rule is written.
 */
public final class ReconcileRules {
  private ReconcileRules() {}

  /** The order's current reservation; NONE when the row has none (a left join found nothing). */
  public enum Reservation {
    HELD, CONFIRMED, RELEASED, NONE;

    static Reservation of(String status) {
      return status == null ? NONE : valueOf(status);
    }

    /** Still counted against the SKU's stock. */
    boolean holdsStock() {
      return this == HELD || this == CONFIRMED;
    }
  }

  /** What is wrong with one order, as its report line names it. */
  public enum Flag {
    PAID_WITHOUT_CHARGE, PAID_CHARGE_MISMATCH, PAID_BUT_REFUNDED, PAID_WITHOUT_CONFIRMED_RESERVATION, PAID_WITHOUT_EVENT,
    REFUNDED_LEDGER_MISMATCH, REFUNDED_BUT_RESERVATION_HELD, REFUNDED_BUT_RESERVATION_CONFIRMED,
    CHARGED_BUT_FAILED, FAILED_BUT_RESERVATION_HELD, FAILED_BUT_RESERVATION_CONFIRMED,
    CHARGED_BUT_CANCELLED, CANCELLED_BUT_RESERVATION_HELD, CANCELLED_BUT_RESERVATION_CONFIRMED,
    CHARGED_BUT_CREATED, CREATED_WITHOUT_HELD,
    /** PAYING, UNKNOWN or REFUNDING for longer than the age bound: it is not converging on its own. */
    PENDING_AGED,
    /** The order's workflow marked it as needing an operator ({@code orders.attention}), whatever its status. */
    NEEDS_ATTENTION,
    /** A status the state machine does not know (only a hand-edited row gets one). */
    UNRECOGNISED_STATUS;

    /** X_BUT_RESERVATION_Y for a terminal status that still holds stock. */
    private static Flag stockHeldAfter(OrderStatus status, Reservation res) {
      return valueOf(status.name() + "_BUT_RESERVATION_" + res.name());
    }
  }

  /** One order's rows in the channel's ledger. */
  public record LedgerEntry(int charges, long charged, long refunded) {
    public static final LedgerEntry NONE = new LedgerEntry(0, 0, 0);

    public long net() {
      return charged - refunded;
    }

    LedgerEntry plusCharge(long amount) {
      return new LedgerEntry(charges + 1, charged + amount, refunded);
    }

    LedgerEntry plusRefund(long amount) {
      return new LedgerEntry(charges, charged, refunded + amount);
    }
  }

  /**
   * One order as the database shows it (status as stored: a text column); inStatus is how long it
   * had been in that status at the snapshot; attention is {@code orders.attention} (null: none).
   */
  public record OrderLine(String orderId, String status, long amount, String reservationStatus, String workflowId,
      int version, boolean hasPaidEvent, Duration inStatus, String attention, String attentionDetail,
      Instant attentionSince) {

    /** An order in its status for no time yet, needing no attention. */
    public OrderLine(String orderId, String status, long amount, String reservationStatus, String workflowId,
        int version, boolean hasPaidEvent) {
      this(orderId, status, amount, reservationStatus, workflowId, version, hasPaidEvent, Duration.ZERO, null, null,
          null);
    }

    public boolean needsAttention() {
      return attention != null;
    }
  }

  /**
   * Whether the order's money may still move at the channel (PAYING, UNKNOWN, REFUNDING): its net
   * there is anywhere between 0 and its amount, aged or marked or not.
   */
  public static boolean moneyInFlight(OrderLine o) {
    try {
      return OrderStatus.valueOf(o.status()).isPending();
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /**
   * Pending: a payment may be in flight, so the order is counted, not judged. An order pending for
   * longer than the age bound, or one needing attention, is judged: its flags say which.
   */
  public record Verdict(boolean pending, List<Flag> flags) {
    static Verdict judged(List<Flag> flags) {
      return new Verdict(false, List.copyOf(flags));
    }
  }

  /**
   * One order's verdict; pendingAgeBound is how long an order may stay PAYING, UNKNOWN or
   * REFUNDING before it is PENDING_AGED. NEEDS_ATTENTION comes last, after the status's flags.
   */
  public static Verdict judge(OrderLine o, LedgerEntry l, Duration pendingAgeBound) {
    Verdict v = judgeStatus(o, l, pendingAgeBound);
    if (!o.needsAttention()) return v;
    List<Flag> flags = new ArrayList<>(v.flags());
    flags.add(Flag.NEEDS_ATTENTION);
    return Verdict.judged(flags);
  }

  private static Verdict judgeStatus(OrderLine o, LedgerEntry l, Duration pendingAgeBound) {
    OrderStatus status;
    Reservation res;
    try {
      status = OrderStatus.valueOf(o.status());
      res = Reservation.of(o.reservationStatus());
    } catch (IllegalArgumentException e) {
      return Verdict.judged(List.of(Flag.UNRECOGNISED_STATUS));
    }
    List<Flag> flags = new ArrayList<>();
    return switch (status) {
      case PAYING, UNKNOWN, REFUNDING -> o.inStatus().compareTo(pendingAgeBound) > 0
          ? Verdict.judged(List.of(Flag.PENDING_AGED)) : new Verdict(true, List.of());
      case PAID -> {
        if (l.charged() == 0) flags.add(Flag.PAID_WITHOUT_CHARGE);
        else if (l.charged() != o.amount()) flags.add(Flag.PAID_CHARGE_MISMATCH);
        if (l.refunded() > 0) flags.add(Flag.PAID_BUT_REFUNDED);
        if (res != Reservation.CONFIRMED) flags.add(Flag.PAID_WITHOUT_CONFIRMED_RESERVATION);
        if (!o.hasPaidEvent()) flags.add(Flag.PAID_WITHOUT_EVENT);
        yield Verdict.judged(flags);
      }
      case REFUNDED -> {
        if (l.charged() != o.amount() || l.refunded() != o.amount()) flags.add(Flag.REFUNDED_LEDGER_MISMATCH);
        if (res.holdsStock()) flags.add(Flag.stockHeldAfter(status, res));
        yield Verdict.judged(flags);
      }
      case FAILED, CANCELLED -> {
        if (l.net() != 0) flags.add(status == OrderStatus.FAILED ? Flag.CHARGED_BUT_FAILED : Flag.CHARGED_BUT_CANCELLED);
        if (res.holdsStock()) flags.add(Flag.stockHeldAfter(status, res));
        yield Verdict.judged(flags);
      }
      case CREATED -> {
        if (l.charged() > 0) flags.add(Flag.CHARGED_BUT_CREATED);
        if (res != Reservation.HELD) flags.add(Flag.CREATED_WITHOUT_HELD);
        yield Verdict.judged(flags);
      }
    };
  }

  /** The flags a charge landing between the snapshot and the ledger read can raise on its own. */
  private static final java.util.Set<Flag> CHARGED_AFTER_SNAPSHOT =
      java.util.EnumSet.of(Flag.CHARGED_BUT_CREATED, Flag.CHARGED_BUT_FAILED, Flag.CHARGED_BUT_CANCELLED);

  /** Whether the verdict has a flag a charge made after the snapshot would explain. */
  public static boolean chargedAfterSnapshot(Verdict v) {
    return v.flags().stream().anyMatch(CHARGED_AFTER_SNAPSHOT::contains);
  }

  /**
   * The verdict on an order whose row moved on after the snapshot (another version now): the
   * charge the ledger shows is of the payment that moved it (a CREATED order goes PAYING before it
   * is charged, a FAILED or CANCELLED one REFUNDING once a late charge is known), so the order is
   * in flight, not charged wrongly. The next report judges it where it is then.
   */
  public static Verdict movedOn(Verdict v) {
    List<Flag> rest = v.flags().stream().filter(f -> !CHARGED_AFTER_SNAPSHOT.contains(f)).toList();
    return rest.isEmpty() ? new Verdict(true, List.of()) : Verdict.judged(rest);
  }

  /**
   * The totals the global checks compare, gathered over every order. pending and pendingSum count
   * the orders whose money may still move ({@link #moneyInFlight}, aged or marked ones too, and any
   * order the Reconciler found moved on since the snapshot) and their amounts.
   */
  public record Totals(int paid, long paidSum, int pending, long pendingSum, int paidWithoutEvent, int confirmed,
      long drift) {}

  /** What can be wrong across orders, as the report's GLOBAL lines name it. */
  public enum GlobalFlag { MULTIPLE_CHARGES, LEDGER_WITHOUT_ORDER, CONFIRMED_NOT_PAID, NET_NOT_PAID_SUM,
    PAID_WITHOUT_EVENT, CONSERVATION_DRIFT }

  public record GlobalFinding(GlobalFlag flag, String line) {}

  /**
   * The checks no single order can fail. orderExists is asked only for a ledger row whose order was
   * not in the snapshot (an order created after it is not an orphan), possibly more than once.
   * channel_net leaves out the rows of orders created after the snapshot (their money is in no
   * total); an orphan's rows are in it. Each pending order's net is between 0 and its amount, so
   * with pending orders the check is paid_sum ≤ channel_net ≤ paid_sum + pending_sum, and with
   * none it is equality.
   */
  public static List<GlobalFinding> global(Map<String, LedgerEntry> ledger, Predicate<String> inSnapshot,
      Predicate<String> orderExists, Totals t) {
    List<GlobalFinding> out = new ArrayList<>();
    ledger.forEach((order, l) -> {
      if (l.charges() > 1) {
        out.add(new GlobalFinding(GlobalFlag.MULTIPLE_CHARGES, "GLOBAL multiple charges for " + order + ": " + l.charges()));
      }
    });
    for (String order : ledger.keySet()) {
      if (!inSnapshot.test(order) && !orderExists.test(order)) {
        out.add(new GlobalFinding(GlobalFlag.LEDGER_WITHOUT_ORDER, "GLOBAL ledger rows without an order: " + order));
      }
    }
    if (t.confirmed() != t.paid()) {
      out.add(new GlobalFinding(GlobalFlag.CONFIRMED_NOT_PAID, "GLOBAL confirmed=" + t.confirmed() + " != paid=" + t.paid()));
    }
    long channelNet = channelNet(ledger, order -> !inSnapshot.test(order) && orderExists.test(order));
    if (t.pending() == 0) {
      if (channelNet != t.paidSum()) {
        out.add(new GlobalFinding(GlobalFlag.NET_NOT_PAID_SUM,
            "GLOBAL channel_net=" + channelNet + " != paid_sum=" + t.paidSum()));
      }
    } else if (channelNet < t.paidSum() || channelNet > t.paidSum() + t.pendingSum()) {
      out.add(new GlobalFinding(GlobalFlag.NET_NOT_PAID_SUM, "GLOBAL channel_net=" + channelNet
          + " not in [paid_sum=" + t.paidSum() + ", paid_sum+pending_sum=" + (t.paidSum() + t.pendingSum()) + "]"));
    }
    if (t.paidWithoutEvent() > 0) {
      out.add(new GlobalFinding(GlobalFlag.PAID_WITHOUT_EVENT,
          "GLOBAL PAID orders without ORDER_PAID outbox event: " + t.paidWithoutEvent()));
    }
    if (t.drift() != 0) {
      out.add(new GlobalFinding(GlobalFlag.CONSERVATION_DRIFT, "GLOBAL conservation drift=" + t.drift()));
    }
    return out;
  }

  /** What the fulfillment check finds, in the consumer's own record of what it shipped. */
  public enum FulfillmentFlag {
    /** The downstream shipped the order more than once: an event took effect twice there. */
    SHIPPED_MORE_THAN_ONCE
  }

  public record FulfillmentFinding(String orderId, FulfillmentFlag flag, int shipCount) {}

  /**
   * The fulfillment check: each order shipped at most once. shipCounts is the consumer's own
   * answer (order → times shipped). A count only grows, so a read taken after the snapshot cannot
   * raise a finding that is gone by then.
   */
  public static List<FulfillmentFinding> fulfillment(Map<String, Integer> shipCounts) {
    List<FulfillmentFinding> out = new ArrayList<>();
    new java.util.TreeMap<>(shipCounts).forEach((order, shipped) -> {
      if (shipped > 1) out.add(new FulfillmentFinding(order, FulfillmentFlag.SHIPPED_MORE_THAN_ONCE, shipped));
    });
    return out;
  }

  public static long channelNet(Map<String, LedgerEntry> ledger) {
    return channelNet(ledger, order -> false);
  }

  /** The ledger's net without the rows of the orders left out. */
  public static long channelNet(Map<String, LedgerEntry> ledger, Predicate<String> leftOut) {
    return ledger.entrySet().stream().filter(e -> !leftOut.test(e.getKey())).mapToLong(e -> e.getValue().net()).sum();
  }
}
