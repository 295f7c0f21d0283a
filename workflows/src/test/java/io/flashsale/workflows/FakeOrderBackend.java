package io.flashsale.workflows;

import io.flashsale.domain.ChannelAnswer;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Step;
import io.flashsale.domain.Transition;
import io.flashsale.paymentchannel.ChannelResult;
import io.temporal.activity.Activity;
import io.temporal.failure.ApplicationFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The database and the channel of one order, in memory, for workflow tests: the same status
 * rules as the real activities in their simplest form, plus programmable faults.
 */
public final class FakeOrderBackend {
  /** One activity call and when the server scheduled it, on the test server's clock (which time skipping moves). */
  record Call(String name, long scheduledAtMillis) {}

  private OrderView row;
  final List<Call> calls = java.util.Collections.synchronizedList(new ArrayList<>());
  /** Every transition committed, the create included: the order's timeline as the database keeps it. */
  final List<Transition> committed = java.util.Collections.synchronizedList(new ArrayList<>());
  /** What charge / query / close answer. */
  volatile ChannelResult chargeAnswer = ChannelResult.CHARGED;
  volatile ChannelResult queryAnswer = ChannelResult.CHARGED;
  volatile ChannelResult closeAnswer = ChannelResult.CLOSED;
  /** Answers the next queries give, in turn, before queryAnswer. */
  final ConcurrentLinkedQueue<ChannelResult> nextQueryAnswers = new ConcurrentLinkedQueue<>();
  /** The charge activity fails (a killed worker, a timeout) instead of answering. */
  volatile boolean chargeFails;
  /**
   * applyNotice applies CHARGED, DECLINED and REFUNDED as the real payment rules do; off, it only
   * records the arrival (IGNORED), for tests about the workflow's handling of notices, not their effect.
   */
  volatile boolean noticesApplyRules;
  /** applyChannelAnswer fails with a data error this many times. */
  final AtomicInteger dataErrors = new AtomicInteger();
  /** When set, charge waits for it: a charge in flight. */
  volatile java.util.concurrent.CountDownLatch chargeGate;
  /** When set, applyChannelAnswer of a query's answer and applyNotice wait for it: a database step in flight. */
  volatile java.util.concurrent.CountDownLatch stepGate;
  /** When set, cancel waits for it: a cancel step in flight. */
  volatile java.util.concurrent.CountDownLatch cancelGate;
  /** A charge finds its unit sold meanwhile: the order goes to REFUNDING instead of PAID. */
  volatile boolean stockLost;
  /** The channel refuses every refund (a definite REFUND_REFUSED) while set. */
  volatile boolean refundRefused;
  /** What markAttention last wrote (null: cleared or never set). */
  volatile String attention;
  /** refund fails (no answer) this many times. */
  final AtomicInteger refundFailures = new AtomicInteger();
  /** beginPay fails with a transient (retryable) error this many times. */
  final AtomicInteger transientErrors = new AtomicInteger();
  /** The first reserve commits its row, then takes this long to answer: a commit whose answer comes too late. */
  volatile long reserveAnswersAfterMillis;
  /** After that commit, reserve's local attempts fail with a transient error for this long (the activity task's do not). */
  volatile long reserveDownAfterCommitMillis;
  private volatile long reserveDownUntilMillis;
  /** beginPay fails with a transient error until this wall-clock time: a database outage. */
  volatile long beginPayDownUntilMillis;
  final ConcurrentLinkedQueue<String> log = new ConcurrentLinkedQueue<>();

  private static void pass(java.util.concurrent.CountDownLatch gate) {
    if (gate == null) return;
    try {
      gate.await(30, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The engine's clock: a local step's scheduled time is the worker's wall clock, not the (skipped) workflow time. */
  java.util.function.LongSupplier engineClock = System::currentTimeMillis;

  private void note(String call) {
    io.temporal.activity.ActivityInfo info = Activity.getExecutionContext().getInfo();
    calls.add(new Call(call, info.isLocal() ? engineClock.getAsLong() : info.getScheduledTimestamp()));
  }

  public synchronized OrderView row() {
    return row;
  }

  /** A reserve that committed in a workflow task that never completed: the row, and no answer to any run. */
  synchronized void commitLostCreate(String tenant, String subject, String sku) {
    row = new OrderView("ord-0001", tenant, subject, sku, 1, 1990, OrderStatus.CREATED, 1, "ord-0001/r1");
    committed.add(new Transition(null, OrderStatus.CREATED, 1, "create"));
  }

  /**
   * A pay whose beginPay committed CREATED → PAYING in a workflow task that never completed, and
   * whose update the engine then dropped: the row is PAYING v2, no run knows, no charge left.
   */
  synchronized void commitLostPay() {
    move(OrderStatus.PAYING, "pay", "PAYING");
  }

  private synchronized Step move(OrderStatus to, String cause, String effect) {
    Transition t = new Transition(row.status(), to, row.version() + 1, cause);
    row = new OrderView(row.orderId(), row.tenant(), row.subject(), row.sku(), row.quantity(), row.amount(), to,
        row.version() + 1, row.reservationKey());
    committed.add(t);
    if (to.isTerminal()) attention = null; // as the transition function clears orders.attention
    return new Step(effect, row, List.of(t));
  }

  private synchronized Step same(String effect) {
    return new Step(effect, row, List.of());
  }

  /** A success for a CREATED, PAYING or UNKNOWN order: PAID, unless its unit was lost meanwhile. */
  private Step charged(String cause) {
    return stockLost
        ? move(OrderStatus.REFUNDING, cause + " stock lost (SOLD_OUT)", "REFUNDING")
        : move(OrderStatus.PAID, cause, "PAID");
  }

  /** The real rules for a notice (PaymentRules): a late success refunds, duplicates change nothing. */
  private synchronized Step applyByRules(Notice n) {
    OrderStatus s = row.status();
    String cause = "callback " + n.notifyId();
    return switch (n.kind()) {
      case "CHARGED" -> switch (s) {
        case PAID, REFUNDING, REFUNDED -> same("DUPLICATE " + s);
        case FAILED, CANCELLED -> move(OrderStatus.REFUNDING, cause + " after " + s, "REFUNDING_ANOMALY");
        case CREATED, PAYING, UNKNOWN -> charged(cause);
      };
      case "DECLINED" -> s == OrderStatus.PAYING || s == OrderStatus.UNKNOWN
          ? move(OrderStatus.FAILED, cause + " DECLINED", "FAILED")
          : same((s == OrderStatus.FAILED ? "DUPLICATE " : "IGNORED ") + s);
      case "REFUNDED" -> s == OrderStatus.REFUNDING ? move(OrderStatus.REFUNDED, cause, "REFUNDED") : same("IGNORED " + s);
      default -> same("REJECTED");
    };
  }

  public final OrderActivities db = new OrderActivities() {
    @Override
    public CreateResult reserve(CreateOrder request, String workflowId) {
      note("reserve");
      Transition created;
      synchronized (FakeOrderBackend.this) {
        if (Activity.getExecutionContext().getInfo().isLocal() && System.currentTimeMillis() < reserveDownUntilMillis) {
          throw new IllegalStateException("connection lost (08006)");
        }
        // as OrderActivitiesImpl.reserve: an existing row is the caller's own earlier commit only on a retry
        if (row != null) {
          boolean ownRetry = Activity.getExecutionContext().getInfo().getAttempt() > 1 && row.version() == 1;
          return new CreateResult(ownRetry ? CreateOutcome.CREATED : CreateOutcome.REPLAY, row, List.of(), null);
        }
        row = new OrderView("ord-0001", request.tenant(), request.subject(), request.sku(), request.quantity(), 1990,
            OrderStatus.CREATED, 1, "ord-0001/r1");
        created = new Transition(null, OrderStatus.CREATED, 1, "create");
        committed.add(created);
      }
      long late = reserveAnswersAfterMillis;
      reserveAnswersAfterMillis = 0;
      if (late > 0) {
        reserveDownUntilMillis = System.currentTimeMillis() + reserveDownAfterCommitMillis;
        try {
          Thread.sleep(late);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return new CreateResult(CreateOutcome.CREATED, row(), List.of(created), null);
    }

    @Override
    public OrderView load(String orderId) {
      note("load");
      return row();
    }

    @Override
    public OrderView findOfRun(String tenant, String subject, String requestKey, String workflowId) {
      note("findOfRun");
      OrderView r = row();
      return r != null && r.tenant().equals(tenant) && r.subject().equals(subject) ? r : null;
    }

    @Override
    public Step beginPay(String orderId) {
      note("beginPay");
      if (transientErrors.getAndUpdate(n -> Math.max(0, n - 1)) > 0
          || System.currentTimeMillis() < beginPayDownUntilMillis) {
        throw new IllegalStateException("connection lost (08006)");
      }
      synchronized (FakeOrderBackend.this) {
        if (row.status() != OrderStatus.CREATED) return same("REJECTED " + row.status());
        return move(OrderStatus.PAYING, "pay", "PAYING");
      }
    }

    @Override
    public Step applyChannelAnswer(String orderId, ChannelAnswer answer, String cause) {
      note("applyChannelAnswer " + answer.result());
      if ("query".equals(cause)) pass(stepGate);
      if (dataErrors.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw ApplicationFailure.newNonRetryableFailure("value too long for type character varying(64) (22001)",
            OrderActivities.DATA_ERROR);
      }
      synchronized (FakeOrderBackend.this) {
        OrderStatus s = row.status();
        if (s != OrderStatus.PAYING && s != OrderStatus.UNKNOWN) return same("NOOP " + s);
        return switch (answer.result()) {
          case CHARGED -> charged(cause);
          case DECLINED, CLOSED -> move(OrderStatus.FAILED, cause, "FAILED");
          default -> s == OrderStatus.UNKNOWN ? same("NOOP UNKNOWN") : move(OrderStatus.UNKNOWN, cause, "UNKNOWN");
        };
      }
    }

    @Override
    public Step cancel(String orderId, String cause) {
      note("cancel " + cause);
      pass(cancelGate);
      synchronized (FakeOrderBackend.this) {
        if (row.status() == OrderStatus.CANCELLED) return same(CommandOutcome.REPLAY_CANCEL.name());
        if (row.status() != OrderStatus.CREATED) return same("REJECTED " + row.status());
        return move(OrderStatus.CANCELLED, cause, CommandOutcome.CANCELLED.name());
      }
    }

    @Override
    public Step expireReservation(String orderId) {
      note("expireReservation");
      synchronized (FakeOrderBackend.this) {
        if (row.status() == OrderStatus.CREATED) return move(OrderStatus.CANCELLED, "reservation expired", "CANCELLED");
        return same("NOOP " + row.status());
      }
    }

    @Override
    public Notice recordSignalArrival(String orderId, Notice notice, String sourceRef) {
      note("recordSignalArrival");
      return new Notice(calls.size(), notice.notifyId(), notice.kind(), notice.amount(), notice.txn(),
          notice.rejection());
    }

    @Override
    public Step applyNotice(String orderId, Notice notice) {
      note("applyNotice " + notice.kind() + " " + notice.notifyId());
      pass(stepGate);
      return noticesApplyRules ? applyByRules(notice) : same("IGNORED " + row().status());
    }

    @Override
    public Step completeRefund(String orderId, String cause) {
      note("completeRefund");
      synchronized (FakeOrderBackend.this) {
        if (row.status() != OrderStatus.REFUNDING) return same("NOOP " + row.status());
        return move(OrderStatus.REFUNDED, cause, "REFUNDED");
      }
    }

    @Override
    public void markAttention(String orderId, String reason, String detail) {
      note("markAttention");
      attention = reason;
    }
  };

  public final ChannelActivities channel = new ChannelActivities() {
    @Override
    public ChannelAnswer charge(String orderId, long amount) {
      note("charge");
      java.util.concurrent.CountDownLatch gate = chargeGate;
      if (gate != null) {
        try {
          gate.await(30, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (chargeFails) throw new IllegalStateException("charge: worker lost before the answer");
      return new ChannelAnswer(chargeAnswer, "txn-1", null);
    }

    @Override
    public ChannelAnswer query(String orderId) {
      note("query");
      ChannelResult scripted = nextQueryAnswers.poll();
      return new ChannelAnswer(scripted != null ? scripted : queryAnswer, "txn-1", null);
    }

    @Override
    public ChannelAnswer close(String orderId) {
      note("close");
      return new ChannelAnswer(closeAnswer, null, null);
    }

    @Override
    public Converged converge(String orderId) {
      // each attempt (the server retries the round) is a query, timed on the engine's clock as it starts
      calls.add(new Call("query", engineClock.getAsLong()));
      calls.add(new Call("converge", engineClock.getAsLong()));
      ChannelResult scripted = nextQueryAnswers.poll();
      ChannelAnswer a = new ChannelAnswer(scripted != null ? scripted : queryAnswer, "txn-1", null);
      boolean byClose = a.result() == ChannelResult.NOT_FOUND;
      if (byClose) a = close(orderId);
      if (!a.definite()) throw io.temporal.failure.ApplicationFailure.newFailure("no answer", "CHANNEL_NO_ANSWER");
      return new Converged(a, byClose);
    }

    @Override
    public ChannelAnswer refund(String orderId, long amount) {
      note("refund");
      if (refundRefused) {
        throw io.temporal.failure.ApplicationFailure.newNonRetryableFailure("refund refused", "REFUND_REFUSED");
      }
      if (refundFailures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        throw new IllegalStateException("refund: no answer from the channel");
      }
      return new ChannelAnswer(ChannelResult.REFUNDED, "txn-1", null);
    }
  };

  long count(String prefix) {
    synchronized (calls) {
      return calls.stream().filter(c -> c.name().startsWith(prefix)).count();
    }
  }

  /** When the calls named so were scheduled, in order (test server clock, ms). */
  List<Long> scheduledTimes(String name) {
    synchronized (calls) {
      return calls.stream().filter(c -> c.name().equals(name)).map(Call::scheduledAtMillis).toList();
    }
  }

  /** The statuses the order went through, create first. */
  public List<OrderStatus> path() {
    synchronized (committed) {
      return committed.stream().map(Transition::to).toList();
    }
  }
}
