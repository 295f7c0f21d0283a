package io.flashsale.channel;

import io.flashsale.channel.LedgerJournal.Charge;
import io.flashsale.channel.LedgerJournal.Close;
import io.flashsale.channel.LedgerJournal.Entry;
import io.flashsale.channel.LedgerJournal.Refund;
import io.flashsale.channel.LedgerJournal.Reset;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Channel state: orders, refunds by refund key and statement rows. Every read and mutation runs under ONE lock, so a
 * close and a charge of the same order are strictly serialized. Callbacks are published (enqueued, never sent)
 * while the lock is held, so their order matches the ledger order.
 *
 * <p>Optionally durable: with a journal file every mutation is first appended to the file (and forced to disk),
 * then applied in memory, so the file order is the ledger order and nothing is answered that the file lacks. On
 * start the file is replayed through the same {@link #apply} step. Only the ledger is durable: fault rules, stats
 * and pending or held callbacks are lost on restart (a callback not yet delivered is not sent again).
 */
final class Ledger implements AutoCloseable {
  private final Object lock = new Object();
  private final Map<String, OrderRecord> orders = new HashMap<>();
  private final Map<String, RefundRecord> refundsByKey = new HashMap<>();
  private final List<LedgerRow> rows = new ArrayList<>();
  private final CallbackSender callbacks;
  /** Null for a memory-only ledger. */
  private final LedgerJournal journal;
  // txn and refund ids stay unique for the life of the ledger (and its file), even across /_reset.
  private long txnSeq;
  private long refundSeq;
  private long rowSeq;

  /** A memory-only ledger. */
  Ledger(CallbackSender callbacks) {
    this(callbacks, null);
  }

  /** A ledger kept in {@code journalFile} (replayed now), or memory-only if it is null. */
  Ledger(CallbackSender callbacks, Path journalFile) {
    this.callbacks = callbacks;
    this.journal = journalFile == null ? null : LedgerJournal.open(journalFile, this::replay);
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
      String txn = id("txn", txnSeq + 1);
      String result = decline ? OrderRecord.DECLINED : OrderRecord.CHARGED;
      LedgerRow row = decline ? null : new LedgerRow(rowSeq + 1, "CHARGE", mo, amount, txn, null, Instant.now());
      String notifyId = callbacks.nextNotifyId();
      record(new Charge(mo, amount, notifyUrl, result, txn, notifyId, row));
      callbacks.publish(notifyId, mo, result, amount, txn, notifyUrl);
      return new ChargeOutcome(ChargeKind.NEW, result, txn);
    }
  }

  /** Closes an order nobody charged yet; otherwise leaves it alone. Returns the (resulting) state. */
  OrderView close(String mo) {
    synchronized (lock) {
      if (!orders.containsKey(mo)) {
        record(new Close(mo));
      }
      OrderRecord r = orders.get(mo);
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
      String refundId = id("rfd", refundSeq + 1);
      LedgerRow row = new LedgerRow(rowSeq + 1, "REFUND", mo, r.amount, r.txn, refundKey, Instant.now());
      String notifyId = callbacks.nextNotifyId();
      record(new Refund(row, refundId, notifyId));
      callbacks.publish(notifyId, mo, OrderRecord.REFUNDED, r.amount, r.txn, r.notifyUrl);
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
      record(new Reset());
    }
  }

  /** Closes the journal (waiting for a write in progress); later mutations fail. */
  @Override
  public void close() {
    synchronized (lock) {
      if (journal != null) {
        journal.close();
      }
    }
  }

  /** Makes a mutation durable (if journaled), then applies it. Caller holds the lock. */
  private void record(Entry e) {
    if (journal != null) {
      journal.append(e); // throws without touching the file or the state if it cannot write
    }
    apply(e);
  }

  /** Rebuilds state from one journal record; also makes sure new ids follow the replayed ones. */
  private void replay(Entry e) {
    synchronized (lock) {
      apply(e);
      String notifyId = e instanceof Charge c ? c.notifyId() : e instanceof Refund r ? r.notifyId() : null;
      if (notifyId != null) {
        callbacks.notifyIdsAfter(seqOf(notifyId, "ntf"));
      }
    }
  }

  /**
   * The one place state changes, for live mutations and replay alike. The checks only fail for a damaged or
   * hand-edited file: live mutations were validated before they were recorded.
   */
  private void apply(Entry e) {
    if (e instanceof Charge c) {
      require(!orders.containsKey(c.merchantOrder()), "order " + c.merchantOrder() + " charged twice");
      orders.put(c.merchantOrder(),
          OrderRecord.charged(c.merchantOrder(), c.amount(), c.notifyUrl(), c.result(), c.txn()));
      txnSeq = Math.max(txnSeq, seqOf(c.txn(), "txn"));
      addRow(c.row());
    } else if (e instanceof Close c) {
      require(!orders.containsKey(c.merchantOrder()), "order " + c.merchantOrder() + " closed after it was known");
      orders.put(c.merchantOrder(), OrderRecord.closedBeforeCharge(c.merchantOrder()));
    } else if (e instanceof Refund rf) {
      LedgerRow row = rf.row();
      OrderRecord r = orders.get(row.merchantOrder());
      require(r != null && OrderRecord.CHARGED.equals(r.status) && r.txn.equals(row.txn())
          && r.amount.compareTo(row.amount()) == 0 && !refundsByKey.containsKey(row.refundKey()),
          "refund " + rf.refundId() + " of order " + row.merchantOrder() + " does not fit the ledger");
      r.status = OrderRecord.REFUNDED;
      r.refundKey = row.refundKey();
      r.refundId = rf.refundId();
      refundsByKey.put(row.refundKey(), new RefundRecord(row.merchantOrder(), r.amount, rf.refundId()));
      refundSeq = Math.max(refundSeq, seqOf(rf.refundId(), "rfd"));
      addRow(row);
    } else if (e instanceof Reset) {
      orders.clear();
      refundsByKey.clear();
      rows.clear();
      rowSeq = 0;
    }
  }

  private void addRow(LedgerRow row) {
    if (row != null) {
      require(row.seq() == rowSeq + 1, "statement row " + row.seq() + " follows row " + rowSeq);
      rows.add(row);
      rowSeq = row.seq();
    }
  }

  private static String id(String prefix, long seq) {
    return String.format("%s-%06d", prefix, seq);
  }

  /** 42 for "txn-000042". */
  private static long seqOf(String id, String prefix) {
    try {
      if (id.startsWith(prefix + "-")) {
        return Long.parseLong(id.substring(prefix.length() + 1));
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw new IllegalStateException("malformed id " + id);
  }

  private static void require(boolean ok, String problem) {
    if (!ok) {
      throw new IllegalStateException(problem);
    }
  }
}
