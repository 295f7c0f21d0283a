package io.flashsale.evidence;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flashsale.launcher.cli.HttpJson;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-06: the fulfillment consumer is first down (connection refused), then slow (it applies each
 * event but answers only after 3 s, past the relay's 1 s delivery timeout), then recovers. Orders
 * paid meanwhile are answered 200 PAID as usual and stay PAID: the downstream is never on the
 * order's path. The outbox backlog grows while nothing is acknowledged, then drains to zero once
 * the consumer answers in time; every event the consumer got but could not acknowledge comes again
 * as a DUPLICATE, and each order ships exactly once.
 */
@Tag("engine-independent") // its claim is about the relay and the consumer, the same on either engine
class Cap06SlowDownstreamTest {
  /** The consumer as the relay sees it: a proxy on this port, in front of the stack's consumer. */
  private static final int DOWNSTREAM_PORT = port();

  @RegisterExtension static final Stack stack = new Stack()
      .with("relay.consumerUrl", "http://127.0.0.1:" + DOWNSTREAM_PORT + "/events")
      .with("relay.deliveryTimeout", "1s");
  @RegisterExtension static final Evidence ev = new Evidence("CAP-06",
      "slow or down downstream: orders still PAID, backlog grows, drains, ship once");

  private static final String SKU = "sku-cap06";
  private static final long SLOW_ANSWER_MS = 3_000;

  private static int port() {
    try {
      return Stack.freePortForChild();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static long unpublished() {
    return stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL");
  }

  @Test
  void aSlowDownstreamNeverFailsAnOrder() throws Exception {
    stack.sku(SKU, 20, 3);
    List<String> paid = new ArrayList<>();

    // 1. down: nothing listens where the relay delivers
    payOrders(0, 4, paid, "consumer down");
    Thread.sleep(1_500); // several relay rounds, each refused
    ev.equal(4L, unpublished(), "consumer down: the 4 events wait in the outbox");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM fulfillment.ful_received"), "consumer down: nothing arrived");

    // 2. slow: the consumer applies each event, the answer comes after the relay stopped waiting
    try (Downstream downstream = Downstream.start(DOWNSTREAM_PORT, stack.wiring.consumer().url(), SLOW_ANSWER_MS)) {
      payOrders(4, 8, paid, "consumer slow");
      ev.equal(8L, unpublished(), "the backlog grew to 8 unpublished events");
      stack.awaitTrue(() -> stack.sql.count("SELECT count(DISTINCT event_id) FROM fulfillment.ful_received") == 8,
          30_000, "the slow consumer did not get all 8 events");
      ev.note("the slow consumer received " + downstream.forwarded.get() + " deliveries, answered "
          + downstream.answeredLate.get() + " of them after " + SLOW_ANSWER_MS + " ms");
      ev.equal(8L, unpublished(), "the slow consumer applied all 8, none acknowledged in time: 8 still unpublished");
      ev.equal(8L, stack.sql.count("SELECT count(*) FROM fulfillment.fulfillment WHERE ship_count = 1"),
          "the slow consumer shipped each order once");

      // 3. recovered: answers come at once
      downstream.answerAfterMs = 0;
      long recovered = System.currentTimeMillis();
      stack.awaitTrue(() -> unpublished() == 0, 30_000, "the outbox did not drain after the consumer recovered");
      ev.note("outbox drained " + (System.currentTimeMillis() - recovered) + " ms after the consumer recovered");
    }
    ev.equal(0L, unpublished(), "recovered: 0 unpublished");
    Map<String, Integer> effects = stack.sql.histogram("SELECT effect FROM fulfillment.ful_received");
    ev.note("consumer effects " + effects);
    ev.equal(8, effects.get("APPLIED"), "APPLIED once per event (8)");
    ev.check(effects.getOrDefault("DUPLICATE", 0) >= 8,
        "every event applied but not acknowledged came again as a DUPLICATE (" + effects.get("DUPLICATE") + " ≥ 8)");
    java.util.Set<String> others = new java.util.TreeSet<>(effects.keySet());
    others.removeAll(java.util.Set.of("APPLIED", "DUPLICATE"));
    ev.equal(java.util.Set.of(), others, "no effect other than APPLIED and DUPLICATE");
    for (String id : paid) {
      ev.equal(1L, stack.sql.count("SELECT ship_count FROM fulfillment.fulfillment WHERE order_id = ?", id),
          id + " shipped exactly once");
    }
    ev.equal(8L, stack.sql.count("SELECT coalesce(sum(ship_count), 0) FROM fulfillment.fulfillment"), "8 shipments in all");
    ev.equal(Map.of("PAID", 8), stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", SKU),
        "every order is still PAID");
    ev.equal(0L, stack.sql.count("SELECT count(*) FROM order_transition t JOIN orders o USING (order_id)"
        + " WHERE o.sku = ? AND t.to_status NOT IN ('CREATED', 'PAYING', 'PAID')", SKU),
        "no order ever moved anywhere but CREATED → PAYING → PAID");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  /** Creates and pays orders from..to-1; each pay must be answered 200 PAID whatever the consumer does. */
  private static void payOrders(int from, int to, List<String> paid, String phase) {
    List<Long> millis = new ArrayList<>();
    for (int i = from; i < to; i++) {
      HttpJson buyer = stack.api.login("t1", "user-cap06-" + i);
      String id = Buyers.create(buyer, "cap06-" + i, SKU, 1).text("order_id");
      long t0 = System.currentTimeMillis();
      HttpJson.Reply r = Buyers.pay(buyer, id);
      millis.add(System.currentTimeMillis() - t0);
      ev.check(r.status() == 200 && "PAID".equals(r.text("status")), phase + ": " + id + " pay answered 200 PAID ("
          + r.status() + " " + r.text("status") + ")");
      ev.equal("PAID", buyer.get("/orders/" + id).text("status"), phase + ": " + id + " reads PAID");
      paid.add(id);
    }
    ev.note(phase + ": pay answered in " + millis + " ms");
  }

  /**
   * The consumer behind a proxy that forwards each delivery at once and answers after
   * {@code answerAfterMs} (0: at once).
   */
  static final class Downstream implements AutoCloseable {
    final AtomicInteger forwarded = new AtomicInteger();
    final AtomicInteger answeredLate = new AtomicInteger();
    volatile long answerAfterMs;
    private final HttpServer server;
    private final ExecutorService handlers = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "slow-downstream");
      t.setDaemon(true);
      return t;
    });
    private final HttpClient http = HttpClient.newHttpClient();
    private final String consumerUrl;

    private Downstream(int port, String consumerUrl, long answerAfterMs) throws IOException {
      this.consumerUrl = consumerUrl;
      this.answerAfterMs = answerAfterMs;
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 64);
      server.setExecutor(handlers);
      server.createContext("/events", this::handle);
      server.start();
    }

    static Downstream start(int port, String consumerUrl, long answerAfterMs) throws IOException {
      return new Downstream(port, consumerUrl, answerAfterMs);
    }

    private void handle(HttpExchange ex) {
      try {
        byte[] body = ex.getRequestBody().readAllBytes();
        HttpResponse<byte[]> r;
        try {
          // passed on as the relay signed it: the consumer reads only a relay's delivery
          String signature = ex.getRequestHeaders().getFirst(io.flashsale.domain.EventDelivery.HEADER);
          r = http.send(HttpRequest.newBuilder(URI.create(consumerUrl)).header("Content-Type", "application/json")
              .header(io.flashsale.domain.EventDelivery.HEADER, signature == null ? "" : signature)
              .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        forwarded.incrementAndGet();
        long delay = answerAfterMs;
        if (delay > 0) {
          answeredLate.incrementAndGet();
          Thread.sleep(delay);
        }
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(r.statusCode(), r.body().length);
        try (OutputStream out = ex.getResponseBody()) {
          out.write(r.body());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (IOException relayGaveUp) {
        // the relay stopped waiting and closed the connection: the answer has nowhere to go
      } finally {
        ex.close();
      }
    }

    @Override
    public void close() {
      server.stop(0);
      handlers.shutdownNow();
    }
  }
}
