package io.flashsale.channel;

import io.flashsale.paymentchannel.CallbackSignatures;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends callbacks (POST JSON to the charge's notify_url) on background threads, never on the thread that answers
 * the charge. Each delivery is retried every 200 ms, backing off to 2 s, until a 2xx or until it gives up after
 * about 2 minutes. Applies the callback fault rules: copies, delay and hold-until-released.
 */
final class CallbackSender {
  private static final Logger log = LoggerFactory.getLogger(CallbackSender.class);
  static final Duration GIVE_UP_AFTER = Duration.ofMinutes(2);
  private static final long FIRST_BACKOFF_MS = 200;
  private static final long MAX_BACKOFF_MS = 2_000;

  private record Held(CallbackEvent event, int copies) {}

  private final String secret;
  private final FaultRules rules;
  private final Stats stats;
  private final HttpClient client;
  private final ExecutorService workers = Executors.newCachedThreadPool(daemon("channel-callback"));
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(daemon("channel-callback-timer"));
  private final AtomicLong notifySeq = new AtomicLong();
  /** Bumped by reset/stop; deliveries of an older generation stop retrying. */
  private final AtomicInteger generation = new AtomicInteger();
  private final Map<String, List<Held>> held = new HashMap<>();
  private volatile boolean stopped;

  CallbackSender(String secret, FaultRules rules, Stats stats) {
    this.secret = secret;
    this.rules = rules;
    this.stats = stats;
    this.client = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2))
        .build();
  }

  String nextNotifyId() {
    return String.format("ntf-%06d", notifySeq.incrementAndGet());
  }

  /** Makes sure later notify ids are above {@code seq} (ids of a replayed ledger file are not handed out again). */
  void notifyIdsAfter(long seq) {
    notifySeq.accumulateAndGet(seq, Math::max);
  }

  /**
   * Creates a callback event with an id from {@link #nextNotifyId} and dispatches it per the order's fault rule.
   * Never blocks.
   */
  CallbackEvent publish(String notifyId, String mo, String kind, BigDecimal amount, String txn, String notifyUrl) {
    CallbackEvent event = new CallbackEvent(notifyId, mo, kind, amount, txn, notifyUrl);
    FaultRule rule = rules.effective(mo);
    int copies = rule.copies();
    if (rule.holdsCallbacks()) {
      synchronized (held) {
        held.computeIfAbsent(mo, k -> new ArrayList<>()).add(new Held(event, copies));
      }
      log.info("callback {} {} of merchant_order={} held", event.notifyId(), kind, mo);
      return event;
    }
    int gen = generation.get();
    Runnable send = () -> deliverCopies(event, copies, gen, deadlineFromNow(GIVE_UP_AFTER));
    long delay = rule.callbackDelay();
    if (delay > 0) {
      timer.schedule(() -> submit(send), delay, TimeUnit.MILLISECONDS);
    } else {
      submit(send);
    }
    return event;
  }

  /**
   * Delivers the order's held callbacks one after another (each retried until 2xx before the next), in FIFO or
   * reverse order. Waits until all are delivered, at most {@code maxWait}; delivery goes on in the background after.
   */
  int release(String mo, boolean reverse, Duration maxWait) throws InterruptedException {
    List<Held> list;
    synchronized (held) {
      list = held.remove(mo);
    }
    if (list == null || list.isEmpty()) {
      return 0;
    }
    if (reverse) {
      Collections.reverse(list);
    }
    int gen = generation.get();
    Future<?> done = workers.submit(() -> {
      for (Held h : list) {
        if (!deliverCopies(h.event(), h.copies(), gen, deadlineFromNow(GIVE_UP_AFTER))) {
          log.warn("release of merchant_order={}: callback {} not delivered", mo, h.event().notifyId());
        }
      }
    });
    await(done, maxWait);
    return list.size();
  }

  /** Sends one callback now and waits for its delivery (at most {@code maxWait}); true if delivered (2xx). */
  boolean sendNow(CallbackEvent event, Duration maxWait) throws InterruptedException {
    int gen = generation.get();
    Future<Boolean> done = workers.submit(() -> deliver(event, gen, deadlineFromNow(maxWait)));
    try {
      return done.get(maxWait.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  void reset() {
    generation.incrementAndGet();
    synchronized (held) {
      held.clear();
    }
  }

  void stop() {
    stopped = true;
    reset();
    timer.shutdownNow();
    workers.shutdownNow();
  }

  private void submit(Runnable task) {
    if (!stopped) {
      try {
        workers.submit(task);
      } catch (java.util.concurrent.RejectedExecutionException ignored) {
        // stopping
      }
    }
  }

  /** Sends {@code copies} copies of the event at the same moment; true if every copy was delivered. */
  private boolean deliverCopies(CallbackEvent event, int copies, int gen, long deadline) {
    if (copies <= 1) {
      return deliver(event, gen, deadline);
    }
    CountDownLatch gate = new CountDownLatch(1);
    List<Future<Boolean>> results = new ArrayList<>();
    for (int i = 0; i < copies; i++) {
      results.add(workers.submit(() -> {
        gate.await();
        return deliver(event, gen, deadline);
      }));
    }
    gate.countDown();
    boolean all = true;
    for (Future<Boolean> f : results) {
      try {
        all &= f.get();
      } catch (ExecutionException e) {
        all = false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return all;
  }

  /** Posts the event until a 2xx answer; gives up at the deadline, on reset/stop, or when interrupted. */
  private boolean deliver(CallbackEvent event, int gen, long deadline) {
    byte[] body = event.body();
    long backoff = FIRST_BACKOFF_MS;
    for (int attempt = 1; !stopped && generation.get() == gen; attempt++) {
      try {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(event.notifyUrl()))
            .timeout(Duration.ofSeconds(5))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (secret != null) {
          req.header(CallbackSignatures.HEADER, CallbackSignatures.header(secret, System.currentTimeMillis() / 1000, body));
        }
        HttpResponse<Void> resp = client.send(req.build(), HttpResponse.BodyHandlers.discarding());
        if (resp.statusCode() / 100 == 2) {
          stats.callbackSent();
          log.info("callback {} {} of merchant_order={} delivered (attempt {})",
              event.notifyId(), event.kind(), event.merchantOrder(), attempt);
          return true;
        }
        log.info("callback {} of merchant_order={} got HTTP {} (attempt {})",
            event.notifyId(), event.merchantOrder(), resp.statusCode(), attempt);
      } catch (IOException | IllegalArgumentException e) {
        log.info("callback {} of merchant_order={} failed (attempt {}): {}",
            event.notifyId(), event.merchantOrder(), attempt, e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
      if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoff) - deadline > 0) {
        log.warn("callback {} of merchant_order={} given up after {} attempts",
            event.notifyId(), event.merchantOrder(), attempt);
        return false;
      }
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
    return false;
  }

  private static long deadlineFromNow(Duration d) {
    return System.nanoTime() + d.toNanos();
  }

  private static void await(Future<?> f, Duration maxWait) throws InterruptedException {
    try {
      f.get(maxWait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      // delivery continues (or already failed) in the background; the caller answers anyway
    }
  }

  private static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
