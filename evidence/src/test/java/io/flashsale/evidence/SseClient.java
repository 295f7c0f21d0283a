package io.flashsale.evidence;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** A minimal server-sent-events client: real HTTP, events read as they arrive. */
final class SseClient implements AutoCloseable {
  private static final String END = "\u0000end";
  private final HttpResponse<Stream<String>> response;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

  private SseClient(HttpResponse<Stream<String>> response) {
    this.response = response;
    Thread reader = new Thread(() -> {
      try {
        response.body().forEach(lines::add);
      } catch (RuntimeException closed) {
        // the stream was closed
      } finally {
        lines.add(END);
      }
    }, "sse-reader");
    reader.setDaemon(true);
    reader.start();
  }

  static SseClient open(int port, String path, String token, String lastEventId) throws Exception {
    return open("http://127.0.0.1:" + port, HttpClient.newHttpClient(), path, token, lastEventId);
  }

  /** Through a client of the caller's (one that trusts a TLS connector's certificate, say). */
  static SseClient open(String base, HttpClient client, String path, String token, String lastEventId) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
        .header("Authorization", "Bearer " + token).header("Accept", "text/event-stream").GET();
    if (lastEventId != null) b.header("Last-Event-ID", lastEventId);
    return new SseClient(client.send(b.build(), HttpResponse.BodyHandlers.ofLines()));
  }

  int status() {
    return response.statusCode();
  }

  /** The next event's lines (comments skipped), or null when the stream ended or nothing came in time. */
  String nextEvent(long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    StringBuilder event = new StringBuilder();
    while (true) {
      String line = lines.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
      if (line == null || line.equals(END)) {
        if (line != null) lines.add(END);
        return null;
      }
      if (line.startsWith(":")) continue;
      if (line.isEmpty()) {
        if (event.length() > 0) return event.toString();
        continue;
      }
      event.append(event.length() == 0 ? "" : "\n").append(line);
    }
  }

  /** True once the server closed the stream (within the time). */
  boolean ended(long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      String line = lines.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
      if (END.equals(line)) {
        lines.add(END);
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    response.body().close();
  }
}
