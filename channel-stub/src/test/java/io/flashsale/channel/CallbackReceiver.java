package io.flashsale.channel;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** A tiny HTTP server that records the callbacks it receives; can refuse the first N with HTTP 500. */
final class CallbackReceiver implements AutoCloseable {
  record Received(String rawBody, JsonNode json, String signature, long atNanos) {}

  private final HttpServer server;
  private final List<Received> received = new ArrayList<>();
  private final AtomicInteger failuresLeft = new AtomicInteger();

  CallbackReceiver() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    server.setExecutor(Executors.newCachedThreadPool());
    server.createContext("/", ex -> {
      try (ex; InputStream in = ex.getRequestBody()) {
        String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        if (failuresLeft.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
          ex.sendResponseHeaders(500, -1);
          return;
        }
        synchronized (received) {
          received.add(new Received(body, Json.MAPPER.readTree(body),
              ex.getRequestHeaders().getFirst("X-Channel-Signature"), System.nanoTime()));
          received.notifyAll();
        }
        ex.sendResponseHeaders(204, -1);
      }
    });
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/notify";
  }

  void failNext(int n) {
    failuresLeft.set(n);
  }

  /** Callbacks received so far for one merchant order, in arrival order. */
  List<Received> of(String merchantOrder) {
    synchronized (received) {
      return received.stream().filter(r -> merchantOrder.equals(r.json().path("merchant_order").asText())).toList();
    }
  }

  /** Waits until at least {@code n} callbacks of the order arrived; returns them. */
  List<Received> await(String merchantOrder, int n, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    synchronized (received) {
      while (of(merchantOrder).size() < n) {
        long left = deadline - System.currentTimeMillis();
        if (left <= 0) {
          throw new AssertionError("expected " + n + " callbacks for " + merchantOrder + ", got " + of(merchantOrder));
        }
        received.wait(left);
      }
      return of(merchantOrder);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
