package io.flashsale.channel;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * In-memory channel state. Every read and mutation runs under ONE lock, so a close and a charge of the same
 * order are strictly serialized. Callbacks are published (enqueued, never sent) while the lock is held, so their
 * order matches the ledger order.
 */
final class Ledger {
  private final Object lock = new Object();
  private final Map<String, OrderRecord> orders = new HashMap<>();
  private final Map<String, RefundRecord> refundsByKey = new HashMap<>();
  private final List<LedgerRow> rows = new ArrayList<>();
  private final CallbackSender callbacks;
  // txn and refund ids stay unique for the life of the process, even across /_reset.
  private long txnSeq;
  private long refundSeq;
  private long rowSeq;

  Ledger(CallbackSender callbacks) {
    this.callbacks = callbacks;
  }

  enum ChargeKind { NEW, REPEAT, CLOSED, AMOUNT_MISMATCH }

  record ChargeOutcome(ChargeKind kind, String result, String txn) {}

  enum RefundKind { NEW, REPEAT, ERROR }

  record RefundOutcome(RefundKind kind, String refundId, String error) {}

  record OrderView(String status, String txn, BigDecimal amount) {}

  private record RefundRecord(String merchantOrder, BigDecimal amount, String refundId) {}

  ChargeOutcome charge(String mo, BigDecimal amount, String notifyUrl, boolean decline) {
    synchronized (lock) {
      OrderRecord existing = orders.get(mo);
      if (existing != null) {
        if (existing.closedBeforeCharge()) {
          return new ChargeOutcome(ChargeKind.CLOSED, OrderRecord.CLOSED, null);
        }
        if (existing.amount.compareTo(amount) != 0) {
          return new ChargeOutcome(ChargeKind.AMOUNT_MISMATCH, null, existing.txn);
        }
        return new ChargeOutcome(ChargeKind.REPEAT, existing.chargeResult, existing.txn);
      }
      String txn = String.format("txn-%06d", ++txnSeq);
      String result = decline ? OrderRecord.DECLINED : OrderRecord.CHARGED;
      orders.put(mo, OrderRecord.charged(mo, amount, notifyUrl, result, txn));
      if (!decline) {
        rows.add(new LedgerRow(++rowSeq, "CHARGE", mo, amount, txn, null, Instant.now()));
      }
      callbacks.publish(mo, result, amount, txn, notifyUrl);
      return new ChargeOutcome(ChargeKind.NEW, result, txn);
    }
  }

  /** Closes an order nobody charged yet; otherwise leaves it alone. Returns the (resulting) state. */
  OrderView close(String mo) {
    synchronized (lock) {
      OrderRecord r = orders.computeIfAbsent(mo, OrderRecord::closedBeforeCharge);
      return new OrderView(r.status, r.txn, r.amount);
    }
  }

  RefundOutcome refund(String mo, String refundKey, BigDecimal amount) {
    synchronized (lock) {
      RefundRecord done = refundsByKey.get(refundKey);
      if (done != null) {
        if (!done.merchantOrder.equals(mo)) {
          return new RefundOutcome(RefundKind.ERROR, null, "REFUND_KEY_CONFLICT");
        }
        if (done.amount.compareTo(amount) != 0) {
          return new RefundOutcome(RefundKind.ERROR, null, "AMOUNT_MISMATCH");
        }
        return new RefundOutcome(RefundKind.REPEAT, done.refundId, null);
      }
      OrderRecord r = orders.get(mo);
      if (r != null && OrderRecord.REFUNDED.equals(r.status)) {
        return new RefundOutcome(RefundKind.ERROR, null, "ALREADY_REFUNDED_OTHER_KEY");
      }
      if (r == null || !OrderRecord.CHARGED.equals(r.status)) {
        return new RefundOutcome(RefundKind.ERROR, null, "NOT_CHARGED");
      }
      if (r.amount.compareTo(amount) != 0) {
        return new RefundOutcome(RefundKind.ERROR, null, "AMOUNT_MISMATCH");
      }
      String refundId = String.format("rfd-%06d", ++refundSeq);
      r.status = OrderRecord.REFUNDED;
      r.refundKey = refundKey;
      r.refundId = refundId;
      refundsByKey.put(refundKey, new RefundRecord(mo, r.amount, refundId));
      rows.add(new LedgerRow(++rowSeq, "REFUND", mo, r.amount, r.txn, refundKey, Instant.now()));
      callbacks.publish(mo, OrderRecord.REFUNDED, r.amount, r.txn, r.notifyUrl);
      return new RefundOutcome(RefundKind.NEW, refundId, null);
    }
  }

  /** Latest state of an order, or null if the channel never heard of it. */
  OrderView find(String mo) {
    synchronized (lock) {
      OrderRecord r = orders.get(mo);
      return r == null ? null : new OrderView(r.status, r.txn, r.amount);
    }
  }

  String notifyUrl(String mo) {
    synchronized (lock) {
      OrderRecord r = orders.get(mo);
      return r == null ? null : r.notifyUrl;
    }
  }

  List<LedgerRow> statement() {
    synchronized (lock) {
      return List.copyOf(rows);
    }
  }

  void reset() {
    synchronized (lock) {
      orders.clear();
      refundsByKey.clear();
      rows.clear();
      rowSeq = 0;
    }
  }
}
