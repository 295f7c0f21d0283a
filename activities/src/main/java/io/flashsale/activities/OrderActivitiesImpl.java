package io.flashsale.activities;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Effect.Kind;
import io.flashsale.domain.Effect;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OperatorProof;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Step;
import io.flashsale.domain.Transition;
import io.flashsale.paymentchannel.ChannelResult;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.DualWrite;
import io.flashsale.persistence.Inventory;
import io.flashsale.persistence.Notifications;
import io.flashsale.persistence.OrderIdIssuer;
import io.flashsale.persistence.OrderRow;
import io.flashsale.persistence.OrderTransitions;
import io.flashsale.persistence.OrderTx;
import io.flashsale.persistence.Skus;
import io.flashsale.workflows.CommandResult;
import io.flashsale.workflows.OrderActivities;
import io.temporal.activity.Activity;
import io.temporal.failure.ApplicationFailure;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every order decision, each in one transaction under the order's row lock. Idempotent: a retry
 * sees the state the first attempt committed and answers from it.
 */
public class OrderActivitiesImpl implements OrderActivities {
  private static final Logger log = LoggerFactory.getLogger(OrderActivitiesImpl.class);

  private final Database db;
  private final Duration reservationTtl;
  private final PaymentRules rules;
  private final Safeguards safeguards;
  private final HotRowGate hotRow;
  /** Signs an operator's notice signals (the admin credential); null: no signal without an arrival is applied. */
  private final String operatorKey;
  /** Issues ids under the database's key, read at the first create and kept (one per worker). */
  private final OrderIdIssuer orderIds = new OrderIdIssuer();

  public OrderActivitiesImpl(Database db, Duration reservationTtl) {
    this(db, reservationTtl, new Safeguards());
  }

  public OrderActivitiesImpl(Database db, Duration reservationTtl, Safeguards safeguards) {
    this(db, reservationTtl, safeguards, HotRowGate.unlimited());
  }

  public OrderActivitiesImpl(Database db, Duration reservationTtl, Safeguards safeguards, HotRowGate hotRow) {
    this(db, reservationTtl, safeguards, hotRow, null);
  }

  /** @param operatorKey the credential an operator's {@code paymentNotification} signal is proved with */
  public OrderActivitiesImpl(Database db, Duration reservationTtl, Safeguards safeguards, HotRowGate hotRow,
      String operatorKey) {
    this.operatorKey = operatorKey;
    this.db = db;
    this.reservationTtl = reservationTtl;
    this.rules = new PaymentRules(safeguards, reservationTtl);
    this.safeguards = safeguards;
    this.hotRow = hotRow;
  }

  /** The order's row, locked, for one decision (the negative control C29-16 may switch the lock or the write guard off). */
  private OrderTx open(Connection c, String orderId) throws SQLException {
    return open(c, orderId, null);
  }

  /** The order's transaction with the safeguards as switched (all on outside the negative controls). */
  private OrderTx open(Connection c, String orderId, DualWrite dualWrite) throws SQLException {
    return new OrderTx(c, orderId, safeguards.on(Safeguards.Safeguard.ROW_LOCK),
        safeguards.on(Safeguards.Safeguard.CONDITIONAL_WRITE), dualWrite);
  }

  /**
   * One transaction of an activity. A data error becomes a non-retryable failure of type
   * {@link OrderActivities#DATA_ERROR} (the workflow flags the order); anything else is thrown
   * as is and retried by the activity's retry policy.
   */
  private <T> T tx(Database.TxWork<T> work) {
    try {
      return db.inTx(work);
    } catch (Database.DataError e) {
      throw dataError(e);
    }
  }

  /**
   * As tx, for the create: a unique violation there means an earlier attempt of this activity (one
   * that outlived its timeout) committed the same order first, so it is retried and the next
   * attempt finds that order instead of failing the create.
   */
  private <T> T txRetryingUniqueViolation(Database.TxWork<T> work) {
    try {
      return db.inTx(work);
    } catch (Database.DataError e) {
      if (UNIQUE_VIOLATION.equals(e.sqlState())) throw new Database.DatabaseException((java.sql.SQLException) e.getCause());
      throw dataError(e);
    }
  }

  private static final String UNIQUE_VIOLATION = "23505";

  private <T> T read(Database.TxWork<T> work) {
    try {
      return db.read(work);
    } catch (Database.DataError e) {
      throw dataError(e);
    }
  }

  private static ApplicationFailure dataError(Database.DataError e) {
    log.error("data error (SQLState {}), not retried: {}", e.sqlState(), e.getMessage());
    return ApplicationFailure.newNonRetryableFailureWithCause(
        "SQLState " + e.sqlState() + ": " + e.getMessage(), OrderActivities.DATA_ERROR, e);
  }

  @Override
  public CreateResult reserve(CreateOrder req, String workflowId) {
    return hotRow.through(req.tenant(), req.sku(), () -> admit(req, workflowId));
  }

  private CreateResult admit(CreateOrder req, String workflowId) {
    return txRetryingUniqueViolation(c -> {
      OrderRow existing = OrderRow.byScope(c, req.tenant(), req.subject(), req.requestKey());
      if (existing != null) {
        if (!existing.payload().equals(req.payload())) {
          return new CreateResult(CreateOutcome.KEY_REUSED, null, List.of(), null);
        }
        // our own earlier attempt committed and its answer was lost: still the creating call
        boolean ownRetry = existing.workflowId().equals(workflowId) && attempt() > 1 && existing.version() == 1;
        return new CreateResult(ownRetry ? CreateOutcome.CREATED : CreateOutcome.REPLAY, existing.view(), List.of(), null);
      }
      Skus.Terms terms = Skus.terms(c, req.tenant(), req.sku());
      if (terms == null) return new CreateResult(CreateOutcome.UNKNOWN_SKU, null, List.of(), null);
      Inventory.Take taken = Inventory.take(c, req.tenant(), req.sku(), req.subject(), req.quantity(), terms.perUserLimit());
      if (taken != Inventory.Take.HELD) {
        c.rollback(); // sold out / over the limit: no order row, no reservation
        return new CreateResult(taken.refusal(), null, List.of(), null);
      }
      // the number is taken only after the cheap checks (a sequence is not rolled back: a failed
      // reserve afterwards leaves a gap, which is harmless); the id is a keyed permutation of it
      OrderIdIssuer.Issued issued = orderIds.next(c);
      String orderId = issued.orderId();
      String key = Inventory.firstReservationKey(orderId);
      Inventory.hold(c, key, req.tenant(), req.sku(), req.subject(), req.quantity(), reservationTtl);
      OrderRow row = new OrderRow(orderId, req.tenant(), req.subject(), req.requestKey(), req.payload(), req.sku(),
          req.quantity(), terms.unitPrice() * req.quantity(), OrderStatus.CREATED, 1, key, 1, workflowId);
      Transition t = OrderTransitions.insertCreated(c, row, issued.seq(), req.note(), "create");
      org.slf4j.MDC.put("orderId", orderId); // the log context key; the worker clears it after the activity
      log.info("order {} CREATED for {}/{} key {}", orderId, req.tenant(), req.subject(), req.requestKey());
      return new CreateResult(CreateOutcome.CREATED, row.view(), List.of(t), terms.now());
    });
  }

  private static int attempt() {
    try {
      return Activity.getExecutionContext().getInfo().getAttempt();
    } catch (RuntimeException notInActivity) {
      return 1;
    }
  }

  @Override
  public OrderView load(String orderId) {
    return read(c -> {
      OrderRow row = OrderRow.get(c, orderId);
      if (row == null) throw new IllegalArgumentException("no such order " + orderId);
      return row.view();
    });
  }

  @Override
  public OrderView findOfRun(String tenant, String subject, String requestKey, String workflowId) {
    return read(c -> {
      OrderRow row = OrderRow.ofRun(c, tenant, subject, requestKey, workflowId);
      return row == null ? null : row.view();
    });
  }

  @Override
  public Step beginPay(String orderId) {
    return tx(c -> {
      OrderTx tx = open(c, orderId);
      if (tx.status() != OrderStatus.CREATED) return tx.step(Effect.of(Kind.REJECTED, tx.status()));
      tx.move(OrderStatus.PAYING, "pay");
      return tx.step(Effect.of(Kind.PAYING));
    });
  }

  /** "charge answered 422 {...}": the channel's status stays, its words go. */
  private static final java.util.regex.Pattern CHANNEL_WORDS = java.util.regex.Pattern.compile("(.*? answered \\d{3}).*",
      java.util.regex.Pattern.DOTALL);

  /**
   * The cause as the order's timeline keeps it, which its buyer reads: a channel's error body (its
   * own text, which may name its internals) stays in the operator's log and the engine's history.
   */
  static String forTimeline(String cause) {
    java.util.regex.Matcher m = CHANNEL_WORDS.matcher(cause);
    return m.matches() ? m.group(1) : cause;
  }

  @Override
  public Step applyChannelAnswer(String orderId, ChannelAnswer answer, String fullCause) {
    DualWrite dualWrite = dualWrite();
    String cause = forTimeline(fullCause);
    Step step = tx(c -> {
      OrderTx tx = open(c, orderId, dualWrite);
      Effect effect = switch (answer.result()) {
        case CHARGED -> rules.onCharged(tx, tx.row().amount(), answer.txn(), cause);
        case DECLINED, CLOSED -> rules.onNotCharged(tx, cause + " " + answer.result());
        case REFUNDED -> rules.onRefunded(tx, cause);
        case NOT_FOUND, UNKNOWN -> rules.onNoAnswer(tx, cause);
      };
      log.info("order {} {} {} -> {}", orderId, fullCause, answer.result(), effect);
      return tx.step(effect);
    });
    writeHeldEvents(orderId, dualWrite);
    return step;
  }

  /**
   * Null: the PAID event goes into the order's transaction (rule 1). Only with the safeguard
   * PAID_EVENT_IN_SAME_TX switched off (negative control C29-19) is it held for a second one.
   */
  private DualWrite dualWrite() {
    return safeguards.on(Safeguards.Safeguard.PAID_EVENT_IN_SAME_TX) ? null : new DualWrite();
  }

  /** Negative control C29-19: the second write of the dual write, after the order's transaction committed. */
  private void writeHeldEvents(String orderId, DualWrite dualWrite) {
    if (dualWrite == null || dualWrite.isEmpty()) return;
    log.warn("order {} PAID committed without its event; writing it in a second transaction (dual write, C29-19)", orderId);
    tx(dualWrite::writeHeld);
  }

  @Override
  public Step cancel(String orderId, String cause) {
    return tx(c -> {
      OrderTx tx = open(c, orderId);
      if (tx.status() == OrderStatus.CANCELLED) return tx.step(Effect.of(Kind.REPLAY_CANCEL));
      if (tx.status() != OrderStatus.CREATED) return tx.step(Effect.of(Kind.REJECTED, tx.status()));
      Inventory.release(c, tx.row().reservationKey());
      tx.move(OrderStatus.CANCELLED, cause);
      log.info("order {} CANCELLED ({})", orderId, cause);
      return tx.step(Effect.of(Kind.CANCELLED));
    });
  }

  @Override
  public Step expireReservation(String orderId) {
    return tx(c -> {
      OrderTx tx = open(c, orderId);
      // a switch expression: a new status does not compile until what its expiry does is decided
      Effect effect = switch (tx.status()) {
        case CREATED -> {
          Inventory.release(c, tx.row().reservationKey());
          tx.move(OrderStatus.CANCELLED, "reservation expired");
          yield Effect.of(Kind.CANCELLED);
        }
        case PAYING, UNKNOWN -> {
          // the slot goes back on sale; a later success re-reserves or refunds (rule 4)
          boolean released = Inventory.release(c, tx.row().reservationKey());
          log.info("order {} reservation expired while {}: released={}", orderId, tx.status(), released);
          yield released ? Effect.of(Kind.RELEASED) : Effect.of(Kind.NOOP, tx.status());
        }
        case PAID, FAILED, CANCELLED, REFUNDING, REFUNDED -> Effect.of(Kind.NOOP, tx.status());
      };
      return tx.step(effect);
    });
  }

  @Override
  public Notice recordSignalArrival(String orderId, Notice n, String sourceRef) {
    // reaching the engine is not enough: a signal without the operator's proof is recorded, not applied
    String rejection = n.rejection() != null ? n.rejection()
        : OperatorProof.verifies(operatorKey, orderId, n) ? null
        : "no valid operator_proof (an operator's notice is signed with the admin credential)";
    return tx(c -> {
      String effect = rejection == null ? null : Effect.rejected(rejection).label();
      long id = Notifications.recordSignalArrival(c, orderId, n, sourceRef, effect);
      if (rejection != null && n.rejection() == null) {
        log.warn("order {} signal arrival {} recorded as {}: {} {} {} without a valid operator proof", orderId,
            sourceRef, id, n.notifyId(), n.kind(), n.amount());
      } else {
        log.info("order {} signal arrival {} recorded as {}{}", orderId, sourceRef, id,
            effect == null ? "" : " (" + effect + ")");
      }
      return new Notice(id, n.notifyId(), n.kind(), n.amount(), n.txn(), rejection);
    });
  }

  @Override
  public Step applyNotice(String orderId, Notice n) {
    DualWrite dualWrite = dualWrite();
    Step step = tx(c -> {
      String recorded = Notifications.lockForApplying(c, orderId, n);
      OrderTx tx = open(c, orderId, dualWrite);
      if (recorded != null) return tx.step(recorded); // a retry after the effect committed
      String cause = "callback " + n.notifyId();
      Effect effect;
      if (n.kind() == null) {
        effect = Effect.of(Kind.IGNORED, tx.status());
      } else if (n.amount() != tx.row().amount()) {
        effect = Effect.of(Kind.AMOUNT_MISMATCH);
      } else {
        effect = switch (ChannelResult.parse(n.kind())) {
          case CHARGED -> rules.onCharged(tx, n.amount(), n.txn(), cause);
          case DECLINED -> rules.onNotCharged(tx, cause + " DECLINED");
          case REFUNDED -> rules.onRefunded(tx, cause);
          case CLOSED, NOT_FOUND, UNKNOWN -> Effect.of(Kind.IGNORED, tx.status()); // not a notice kind
        };
      }
      Notifications.recordApplied(c, n.notificationId(), effect.label());
      log.info("order {} notice {} {} -> {}", orderId, n.notifyId(), n.kind(), effect);
      return tx.step(effect);
    });
    writeHeldEvents(orderId, dualWrite);
    return step;
  }

  @Override
  public Step completeRefund(String orderId, String cause) {
    return tx(c -> {
      OrderTx tx = open(c, orderId);
      if (tx.status() != OrderStatus.REFUNDING) return tx.step(Effect.of(Kind.NOOP, tx.status()));
      tx.move(OrderStatus.REFUNDED, cause);
      return tx.step(Effect.of(Kind.REFUNDED));
    });
  }

  @Override
  public void markAttention(String orderId, String reason, String detail) {
    tx(c -> {
      OrderTransitions.markAttention(c, orderId, reason, detail);
      if (reason != null) log.warn("order {} needs attention: {} ({})", orderId, reason, detail);
      return null;
    });
  }
}
