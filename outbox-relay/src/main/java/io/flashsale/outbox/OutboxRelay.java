package io.flashsale.outbox;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.lifecycle.Managed;
import io.flashsale.domain.EventDelivery;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.Outbox;
import io.flashsale.persistence.OutboxEvent;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Outbox relay (docs/DESIGN.md §Outbox, relay and consumer): claims a batch with FOR UPDATE SKIP
 * LOCKED, delivers each event over HTTP and marks it published only after the consumer answered
 * 2xx, in the same transaction.
 * At-least-once: a crash after the 2xx and before the commit redelivers. Any number of relays may
 * run at once; SKIP LOCKED gives each its own rows.
 */
public final class OutboxRelay implements Managed {
  private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Database db;
  private final String consumerUrl;
  private final int batchSize;
  private final long pollMillis;
  private final String name;
  /** Signs every delivery: the consumer refuses anything else. */
  private final EventDelivery signer;
  /** The consumer's answer is awaited this long by default. */
  public static final Duration DEFAULT_DELIVERY_TIMEOUT = Duration.ofSeconds(5);

  private final Duration deliveryTimeout;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final AtomicLong delivered = new AtomicLong();
  /**
   * The claim skips rows another relay holds. Only a test switches it off (C29-09's control, as the
   * payment path's Safeguards are switched): no configuration key, command or endpoint reaches it.
   */
  private volatile boolean skipLocked = true;
  private ScheduledExecutorService loop;

  public OutboxRelay(Database db, String consumerUrl, String deliverySecret, int batchSize, long pollMillis,
      String name) {
    this(db, consumerUrl, deliverySecret, batchSize, pollMillis, name, DEFAULT_DELIVERY_TIMEOUT);
  }

  /**
   * @param deliverySecret the secret the consumer shares with its relays; every delivery is signed with it
   * @param deliveryTimeout how long one delivery waits for the consumer's answer; past it the
   *     event stays unpublished and is delivered again in a later round
   */
  public OutboxRelay(Database db, String consumerUrl, String deliverySecret, int batchSize, long pollMillis,
      String name, Duration deliveryTimeout) {
    // a batch of 0 is always "full": drain() would spin without ever delivering
    if (batchSize < 1) throw new IllegalArgumentException("relay batch size must be at least 1, not " + batchSize);
    if (deliveryTimeout.isNegative() || deliveryTimeout.isZero()) {
      throw new IllegalArgumentException("relay delivery timeout must be positive, not " + deliveryTimeout);
    }
    this.deliveryTimeout = deliveryTimeout;
    this.signer = new EventDelivery(deliverySecret);
    this.db = db;
    this.consumerUrl = consumerUrl;
    this.batchSize = batchSize;
    this.pollMillis = pollMillis;
    this.name = name;
  }

  /**
   * Test-only: claims with a plain FOR UPDATE, so this relay's claim waits until another relay's
   * batch commits instead of taking other rows (the control that shows what SKIP LOCKED buys).
   */
  public void switchOffSkipLocked() {
    skipLocked = false;
  }

  /** Events this relay delivered and marked published. */
  public long delivered() {
    return delivered.get();
  }

  /** One batch: claim, deliver, mark; returns how many were marked published. */
  public int relayOnce() {
    int marked = db.inTx(c -> {
      List<OutboxEvent> batch = Outbox.claim(c, batchSize, skipLocked);
      List<Long> acked = new ArrayList<>();
      for (OutboxEvent e : batch) {
        // a failed one stays unpublished for the next round; it does not hold up the others
        // (the consumer's version guard absorbs the reordering)
        if (deliver(e)) acked.add(e.eventId());
      }
      Outbox.markPublished(c, acked);
      return acked.size();
    });
    delivered.addAndGet(marked);
    return marked;
  }

  private boolean deliver(OutboxEvent e) {
    try (var mdc = org.slf4j.MDC.putCloseable(io.flashsale.domain.LogKeys.ORDER_ID, e.orderId())) {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("event_id", e.eventId());
      body.put("order_id", e.orderId());
      body.put("event_type", e.eventType());
      body.put("order_version", e.orderVersion());
      body.put("payload", e.payload());
      byte[] raw = JSON.writeValueAsBytes(body);
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(consumerUrl))
          .timeout(deliveryTimeout)
          .header("Content-Type", "application/json")
          .header(EventDelivery.HEADER, signer.sign(raw))
          .POST(HttpRequest.BodyPublishers.ofByteArray(raw))
          .build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() / 100 == 2) return true; // any 2xx is an acknowledgement (202, 204 …)
      log.warn("relay {}: order {} event {} answered {}", name, e.orderId(), e.eventId(), r.statusCode());
    } catch (IOException ex) {
      log.warn("relay {}: order {} event {} not delivered: {}", name, e.orderId(), e.eventId(), ex.toString());
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
    }
    return false;
  }

  /** Set by {@link #stop()}: the drain loop takes no further batch. */
  private volatile boolean stopping;

  @Override
  public void start() {
    stopping = false;
    loop = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "outbox-relay-" + name);
      t.setDaemon(true);
      return t;
    });
    loop.scheduleWithFixedDelay(this::drain, pollMillis, pollMillis, TimeUnit.MILLISECONDS);
  }

  /** Relays full batches back to back, then waits for the next poll. */
  public void drain() {
    try {
      while (!stopping && relayOnce() == batchSize) {
        // a full batch went through: more may be waiting (unless the service is stopping)
      }
    } catch (RuntimeException e) {
      log.warn("relay {} round failed: {}", name, e.toString());
    }
  }

  /**
   * Lets the round in progress finish and starts no other, however long the backlog (up to 10 s,
   * then the delivery is interrupted; unmarked events are delivered again later).
   */
  @Override
  public void stop() throws InterruptedException {
    stopping = true;
    if (loop != null) {
      loop.shutdown();
      if (!loop.awaitTermination(10, TimeUnit.SECONDS)) {
        loop.shutdownNow();
        loop.awaitTermination(2, TimeUnit.SECONDS);
      }
    }
  }

  /** True once the relay's loop ended (or never started). */
  public boolean isStopped() {
    return loop == null || loop.isTerminated();
  }
}
