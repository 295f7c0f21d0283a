package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-07, CAP-09, X-07: order events over SSE. The stream shows the cancel as it happens; a
 * stream resumed with Last-Event-ID starts after that version; another subject gets 404; revoking
 * the principal ends its open stream and every later call is 403. Streams are bounded: the third
 * of two allowed is 503, and closing one gives its permit back.
 */
@Tag("engine-independent") // its claim is about the API's event stream, the same on either engine
class Cap07EventStreamTest {
  @RegisterExtension static final Stack stack = new Stack().with("maxEventStreams", 2)
      .with("eventStreamHeartbeat", "300ms");
  @RegisterExtension static final Evidence ev = new Evidence("CAP-07", "SSE: live cancel, resume, revoke, capacity (CAP-09, X-07)");

  private static int openStreams() {
    return stack.admin.get("/metrics").body().path("gauges").path("flashsale.sse.open").path("value").asInt(-1);
  }

  @Test
  void eventStreams() throws Exception {
    stack.sku("sku-cap07", 5, 3);
    HttpJson owner = stack.api.login("t1", "user-cap07");
    HttpJson other = stack.api.login("t1", "user-cap07b");
    String id = Buyers.create(owner, "cap07", "sku-cap07", 1).text("order_id");
    int port = stack.wiring.apiPort();

    try (SseClient sse = SseClient.open(port, "/orders/" + id + "/events", owner.token(), null)) {
      ev.equal(200, sse.status(), "stream opens with 200");
      String first = sse.nextEvent(5_000);
      ev.check(first != null && first.startsWith("id: 1\nevent: transition") && first.contains("\"to_status\":\"CREATED\""),
          "first event: id 1, CREATED");
      Buyers.cancel(owner, id);
      String cancel = sse.nextEvent(5_000);
      ev.note("live event after cancel: " + (cancel == null ? null : cancel.replace('\n', ' ')));
      ev.check(cancel != null && cancel.startsWith("id: 2") && cancel.contains("\"to_status\":\"CANCELLED\""),
          "the stream shows the cancel as it happens (id 2, CANCELLED)");
    }
    try (SseClient resumed = SseClient.open(port, "/orders/" + id + "/events", owner.token(), "1")) {
      String next = resumed.nextEvent(5_000);
      ev.check(next != null && next.startsWith("id: 2"), "Last-Event-ID: 1 resumes at version 2 (X-07)");
    }
    try (SseClient foreign = SseClient.open(port, "/orders/" + id + "/events", other.token(), null)) {
      ev.equal(404, foreign.status(), "another subject's stream → 404, as a missing order");
    }

    // capacity (CAP-09); closed streams are noticed at the next keep-alive write
    ev.check(stack.within(() -> openStreams() == 0, 10_000), "the closed streams released their permits");
    // HEAD writes no stream, so it takes no slot: more HEADs than slots, and every slot is still free
    java.net.http.HttpClient plain = java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1)
        .build();
    for (int i = 0; i < 3; i++) {
      java.net.http.HttpResponse<Void> head = plain.send(java.net.http.HttpRequest.newBuilder(
              java.net.URI.create("http://127.0.0.1:" + port + "/orders/" + id + "/events"))
          .timeout(java.time.Duration.ofSeconds(10))
          .header("Authorization", "Bearer " + owner.token()).header("Accept", "text/event-stream")
          .method("HEAD", java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
          java.net.http.HttpResponse.BodyHandlers.discarding());
      ev.equal(200, head.statusCode(), "HEAD of the stream " + (i + 1) + " → 200");
    }
    ev.equal(0, openStreams(), "three HEADs hold none of the 2 slots");
    try (SseClient a = SseClient.open(port, "/orders/" + id + "/events", owner.token(), null);
         SseClient b = SseClient.open(port, "/orders/" + id + "/events", owner.token(), null)) {
      ev.check(a.status() == 200 && b.status() == 200, "two streams open");
      try (SseClient c = SseClient.open(port, "/orders/" + id + "/events", owner.token(), null)) {
        ev.equal(503, c.status(), "a third stream → 503");
      }
      a.close();
      ev.check(stack.within(() -> openStreams() == 1, 10_000), "closing a stream: the server notices and releases it");
      boolean freed = stack.within(() -> {
        try (SseClient d = SseClient.open(port, "/orders/" + id + "/events", owner.token(), null)) {
          return d.status() == 200;
        } catch (Exception e) {
          return false;
        }
      }, 10_000);
      ev.check(freed, "closing a stream gives its permit back");
    }

    // revoke ends the stream (CAP-07)
    ev.check(stack.within(() -> openStreams() == 0, 10_000), "capacity probes released");
    try (SseClient live = SseClient.open(port, "/orders/" + id + "/events", owner.token(), null)) {
      ev.equal(200, live.status(), "a stream to be revoked opens");
      live.nextEvent(5_000);
      live.nextEvent(5_000);
      stack.admin.post("/tasks/revoke?tenant=t1&subject=user-cap07", null);
      String revoked = live.nextEvent(5_000);
      ev.check(revoked != null && revoked.startsWith("event: revoked"), "the open stream gets a revoked event");
      ev.check(live.ended(5_000), "and is closed by the server");
    }
    ev.equal(403, owner.get("/orders/" + id).status(), "after revoke: GET → 403");
    ev.equal(403, Buyers.pay(owner, id).status(), "after revoke: pay → 403");
    ev.equal(403, SseClient.open(port, "/orders/" + id + "/events", owner.token(), null).status(),
        "after revoke: a new stream → 403");
  }
}
