package io.flashsale.evidence;

import com.sun.net.httpserver.HttpServer;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.outbox.OutboxRelay;
import io.flashsale.persistence.Database;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-09: two relays drain 40 outbox events at once (FOR UPDATE SKIP LOCKED): the consumer
 * receives exactly 40, each once. A re-sent event is a DUPLICATE, an older version of an order
 * is STALE, and no order ships twice.
 *
 * <p>Why SKIP LOCKED: a relay holds its claimed batch (row locks) until the consumer acknowledged
 * it. A first relay is held inside its delivery (the consumer's answer is held back by a forwarding
 * gate in front of the real consumer until the test releases it). Control: a second relay whose claim is a plain
 * FOR UPDATE (the relay's test-only switch) waits in PostgreSQL (pg_stat_activity: wait event
 * Lock/transactionid) for the whole hold and only claims once the first committed. Real: a second
 * relay with SKIP LOCKED claims and delivers a disjoint batch while the first still holds its own.
 */
@Tag("engine-independent") // its claim is about the relays and the consumer, the same on either engine
class C2909RelaysAndConsumerTest {
  @RegisterExtension static final Stack stack = new Stack().with("relay.enabled", false);
  @RegisterExtension static final Evidence ev = new Evidence("C29-09", "two relays, 40 deliveries, SKIP LOCKED vs FOR UPDATE, DUPLICATE, STALE");

  /** How long the control watches the blocked plain claim before releasing the first relay. */
  private static final long HOLD_MS = 1_500;
  /**
   * How long a held delivery may wait for its release, and the SKIP LOCKED relay for its round:
   * generous, so only a claim that really waits for the held batch runs into it.
   */
  private static final long GATE_CAP_MS = 60_000;
  /** The held relays' delivery timeout: above the gate's cap, so a held delivery never times out. */
  private static final Duration HELD_DELIVERY_TIMEOUT = Duration.ofMillis(GATE_CAP_MS + 30_000);
  private static final String CLAIM = "SELECT event_id, order_id";

  @Test
  void twoRelaysDeliverEveryEventOnce() throws Exception {
    stack.sku("sku-c2909", 40, 3);
    HttpJson buyer = null;
    for (int i = 0; i < 40; i++) {
      if (i % 3 == 0) buyer = stack.api.login("t1", "user-09" + String.format("%02d", i));
      String id = Buyers.create(buyer, "c2909-" + i, "sku-c2909", 1).text("order_id");
      if (i % 2 == 0) Buyers.pay(buyer, id);
      else Buyers.cancel(buyer, id);
    }
    ev.equal(40L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "40 unpublished events");

    Database db = stack.db();
    String consumer = stack.wiring.consumer().url();
    List<OutboxRelay> relays = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try (Gate gate = new Gate(consumer)) {
      // control: without SKIP LOCKED the second claim waits behind the first relay's batch
      OutboxRelay holder = relay(relays, db, gate.url("held"), "holder-1");
      OutboxRelay plain = relay(relays, db, gate.url("free"), "plain");
      plain.switchOffSkipLocked();
      Future<Integer> first = pool.submit(holder::relayOnce);
      gate.awaitHeld();
      long t0 = System.nanoTime();
      Future<Integer> second = pool.submit(plain::relayOnce);
      stack.awaitBlockedOnLock(CLAIM, 5_000);
      String waitEvent = stack.sql.text("SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity"
          + " WHERE wait_event_type = 'Lock' AND query LIKE ?", CLAIM + "%");
      ev.note("plain FOR UPDATE: the second relay's claim waits in PostgreSQL (" + waitEvent + "), locks not granted "
          + stack.sql.column("SELECT locktype || ' ' || mode FROM pg_locks WHERE NOT granted"));
      ev.check(waitEvent != null && waitEvent.startsWith("Lock/"), "plain FOR UPDATE: the second claim is blocked on a lock");
      sleepUntil(t0, HOLD_MS);
      ev.check(!second.isDone() && gate.received("free").isEmpty(),
          "plain FOR UPDATE: after " + HOLD_MS + " ms the second relay has claimed and delivered nothing");
      gate.release();
      ev.equal(5, first.get(), "the first relay delivered its batch once released");
      int plainDelivered = second.get(10, TimeUnit.SECONDS);
      long waited = (System.nanoTime() - t0) / 1_000_000;
      ev.note("plain FOR UPDATE: the second relay's round took " + waited + " ms (the first held its batch "
          + HOLD_MS + " ms), then delivered " + plainDelivered + " events " + gate.received("free"));
      ev.check(waited >= HOLD_MS, "plain FOR UPDATE: the second relay waited at least the hold (" + waited + " ms)");
      ev.check(disjoint(gate.received("held"), gate.received("free")), "plain FOR UPDATE: still disjoint batches, one after the other");

      // real: SKIP LOCKED claims other rows at once, while the first relay still holds its batch
      gate.reset();
      OutboxRelay holder2 = relay(relays, db, gate.url("held"), "holder-2");
      OutboxRelay skipping = relay(relays, db, gate.url("free"), "skip-locked");
      first = pool.submit(holder2::relayOnce);
      gate.awaitHeld();
      t0 = System.nanoTime();
      second = pool.submit(skipping::relayOnce);
      // the first relay's batch stays held until gate.release(): a claim that waited for it could
      // only finish after the release, so the deadline is generous and the check is on the order
      Integer skipDelivered = null;
      try {
        skipDelivered = second.get(GATE_CAP_MS / 2, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.TimeoutException stillWaiting) {
        // the check below fails
      }
      long took = (System.nanoTime() - t0) / 1_000_000;
      boolean heldMeanwhile = !first.isDone();
      List<Long> heldBatch = gate.heldClaimedIds();
      gate.release();
      ev.note("SKIP LOCKED: the second relay's round took " + took + " ms while the first held its batch, ids "
          + gate.received("free") + " vs held " + heldBatch);
      ev.check(skipDelivered != null && heldMeanwhile,
          "SKIP LOCKED: the second relay claimed and delivered while the first still held its batch (" + took + " ms)");
      ev.equal(5, skipDelivered, "SKIP LOCKED: the second relay delivered a full batch of 5");
      ev.equal(5, first.get(), "the first relay delivered its batch once released");
      ev.check(disjoint(gate.received("held"), gate.received("free")), "SKIP LOCKED: the two batches are disjoint");
    }

    // the rest: two relays drain at once, straight to the consumer
    OutboxRelay one = relay(relays, db, consumer, "one");
    OutboxRelay two = relay(relays, db, consumer, "two");
    List<Future<?>> runs = List.of(pool.submit(one::drain), pool.submit(two::drain));
    for (Future<?> f : runs) f.get();
    pool.shutdown();
    StringBuilder by = new StringBuilder();
    long total = 0;
    for (OutboxRelay r : relays) {
      by.append(by.length() == 0 ? "" : ", ").append(r.delivered());
      total += r.delivered();
    }
    ev.note("delivered by relay (holder-1, plain, holder-2, skip-locked, one, two): " + by);
    ev.equal(40L, total, "the relays delivered 40 together");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"), "every event published");
    ev.equal(40L, stack.sql.count("SELECT count(*) FROM fulfillment.ful_received"), "the consumer received exactly 40");
    ev.equal(Map.of("APPLIED", 40), stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"), "all 40 APPLIED");
    ev.equal(20L, stack.sql.count("SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment"), "20 PAID orders shipped");

    long first = stack.sql.count("SELECT min(event_id) FROM outbox WHERE event_type = 'ORDER_PAID'");
    String paidOrder = stack.sql.text("SELECT order_id FROM outbox WHERE event_id = ?", first);
    HttpJson.Reply again = stack.deliverToConsumer(Map.of("event_id", first, "order_id", paidOrder,
        "event_type", "ORDER_PAID", "order_version", 3, "payload", "{}"));
    ev.equal("DUPLICATE", again.text("effect"), "a re-sent event → DUPLICATE");
    HttpJson.Reply older = stack.deliverToConsumer(Map.of("event_id", 1_000_000, "order_id", paidOrder,
        "event_type", "ORDER_PAID", "order_version", 2, "payload", "{}"));
    ev.equal("STALE", older.text("effect"), "an older version of the order → STALE");
    ev.equal(1L, stack.sql.count("SELECT ship_count FROM fulfillment.fulfillment WHERE order_id = ?", paidOrder),
        paidOrder + " shipped once");
    ev.equal(20L, stack.sql.count("SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment"),
        "ship count unchanged");
    ev.note("consumer effects " + stack.sql.histogram("SELECT effect FROM fulfillment.ful_received"));
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static OutboxRelay relay(List<OutboxRelay> all, Database db, String url, String name) {
    OutboxRelay r = new OutboxRelay(db, url, stack.wiring.deliverySecret(), 5, 50, name, HELD_DELIVERY_TIMEOUT);
    all.add(r);
    return r;
  }

  private static boolean disjoint(List<Long> a, List<Long> b) {
    Set<Long> s = new HashSet<>(a);
    return !a.isEmpty() && !b.isEmpty() && b.stream().noneMatch(s::contains);
  }

  private static void sleepUntil(long startNanos, long millis) throws InterruptedException {
    long left = millis - (System.nanoTime() - startNanos) / 1_000_000;
    if (left > 0) Thread.sleep(left);
  }

  /**
   * A forwarding gate in front of the real consumer: {@code /held/events} holds each delivery
   * until {@link #release()} (at most {@link #GATE_CAP_MS}, below the held relays' delivery timeout), {@code
   * /free/events} passes at once. Records the event ids each path received.
   */
  private static final class Gate implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "c2909-gate");
      t.setDaemon(true);
      return t;
    });
    private final HttpClient http = HttpClient.newHttpClient();
    private final String consumer;
    private final Map<String, List<Long>> received = new ConcurrentHashMap<>();
    private volatile CountDownLatch open = new CountDownLatch(1);
    private volatile CountDownLatch firstHeld = new CountDownLatch(1);
    /** The held relay's whole claim: the ids it had when its first delivery arrived. */
    private volatile List<Long> heldClaim = List.of();

    Gate(String consumer) throws java.io.IOException {
      this.consumer = consumer;
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
      server.setExecutor(threads);
      for (String path : List.of("held", "free")) {
        server.createContext("/" + path + "/events", ex -> {
          byte[] body = ex.getRequestBody().readAllBytes();
          long eventId = HttpJson.JSON.readTree(body).path("event_id").asLong();
          received.computeIfAbsent(path, k -> new CopyOnWriteArrayList<>()).add(eventId);
          try {
            if (path.equals("held")) {
              if (firstHeld.getCount() > 0) {
                heldClaim = claimedBy(eventId);
                firstHeld.countDown();
              }
              open.await(GATE_CAP_MS, TimeUnit.MILLISECONDS);
            }
            // passed on as the relay signed it: the consumer reads only a relay's delivery
            String signature = ex.getRequestHeaders().getFirst(io.flashsale.domain.EventDelivery.HEADER);
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create(consumer))
                .header("Content-Type", "application/json")
                .header(io.flashsale.domain.EventDelivery.HEADER, signature == null ? "" : signature)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
            ex.getResponseHeaders().set("Content-Type", "application/json");
            ex.sendResponseHeaders(r.statusCode(), r.body().length);
            ex.getResponseBody().write(r.body());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ex.sendResponseHeaders(503, -1);
          } finally {
            ex.close();
          }
        });
      }
      server.start();
    }

    /** The unpublished ids the held relay's batch of 5 starts with (its claim is in id order). */
    private static List<Long> claimedBy(long firstId) {
      return stack.sql.column("SELECT event_id FROM outbox WHERE published_at IS NULL AND event_id >= ?"
          + " ORDER BY event_id LIMIT 5", firstId).stream().map(Long::valueOf).toList();
    }

    String url(String path) {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/" + path + "/events";
    }

    void awaitHeld() throws InterruptedException {
      if (!firstHeld.await(10, TimeUnit.SECONDS)) throw new AssertionError("the held relay delivered nothing");
    }

    List<Long> heldClaimedIds() {
      return heldClaim;
    }

    List<Long> received(String path) {
      return List.copyOf(received.getOrDefault(path, List.of()));
    }

    void release() {
      open.countDown();
    }

    void reset() {
      received.clear();
      open = new CountDownLatch(1);
      firstHeld = new CountDownLatch(1);
      heldClaim = List.of();
    }

    @Override
    public void close() {
      open.countDown();
      server.stop(0);
      threads.shutdownNow();
    }
  }
}
