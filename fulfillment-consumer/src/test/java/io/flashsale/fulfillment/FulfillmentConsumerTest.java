package io.flashsale.fulfillment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.domain.EventDelivery;
import io.flashsale.fulfillment.RunningConsumer.Fulfillment;
import io.flashsale.fulfillment.RunningConsumer.Stored;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The consumer over real HTTP on a real PostgreSQL: an event id takes effect once however often it
 * arrives, an older version of an order never overwrites a newer one, only ORDER_PAID ships, every
 * arrival is recorded, and a body it cannot trust is refused before anything is stored.
 */
class FulfillmentConsumerTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  /** Every test its own event ids and orders, so tests never share rows. */
  private static final AtomicLong NEXT_ID = new AtomicLong(1000);

  private static EmbeddedPostgres postgres;
  private static RunningConsumer consumer;

  @BeforeAll
  static void startConsumer() throws IOException {
    postgres = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start();
    consumer = RunningConsumer.start(postgres);
  }

  @AfterAll
  static void stopConsumer() throws IOException {
    if (consumer != null) consumer.close();
    if (postgres != null) postgres.close();
  }

  // ---- each event once

  @ParameterizedTest
  @CsvSource({"ORDER_PAID, 1", "ORDER_FAILED, 0", "ORDER_CANCELLED, 0", "ORDER_REFUNDED, 0"})
  void aFirstArrivalIsAppliedAndOnlyOrderPaidShips(String eventType, int shipped) throws Exception {
    Event event = newEvent(eventType, 3);

    assertEffect("APPLIED", deliver(event.json()));

    assertEquals(new Fulfillment(3, eventType, shipped), consumer.fulfillment(event.orderId()));
    assertEquals(List.of("APPLIED"), effectsOf(event));
  }

  @Test
  void aRepeatedEventIsAcknowledgedAsDuplicateAndShipsOnce() throws Exception {
    Event paid = newEvent("ORDER_PAID", 3);

    assertEffect("APPLIED", deliver(paid.json()));
    // a 200 again: the relay must stop resending it
    assertEffect("DUPLICATE", deliver(paid.json()));
    assertEffect("DUPLICATE", deliver(paid.json()));

    assertEquals(new Fulfillment(3, "ORDER_PAID", 1), consumer.fulfillment(paid.orderId()));
    assertEquals(List.of("APPLIED", "DUPLICATE", "DUPLICATE"), effectsOf(paid), "every arrival is recorded");
  }

  @Test
  void copiesArrivingTogetherApplyExactlyOnce() throws Exception {
    Event paid = newEvent("ORDER_PAID", 3);
    int copies = 8;
    ExecutorService senders = Executors.newFixedThreadPool(copies);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Answer>> answers = new ArrayList<>();
      for (int i = 0; i < copies; i++) {
        answers.add(senders.submit(() -> {
          go.await();
          return deliver(paid.json());
        }));
      }
      go.countDown();
      List<String> effects = new ArrayList<>();
      for (Future<Answer> f : answers) {
        Answer a = f.get();
        assertEquals(200, a.status(), a.toString());
        effects.add(a.effect());
      }
      Collections.sort(effects);
      List<String> expected = new ArrayList<>(Collections.nCopies(copies - 1, "DUPLICATE"));
      expected.add(0, "APPLIED");
      assertEquals(expected, effects);
    } finally {
      senders.shutdownNow();
    }
    assertEquals(1, consumer.fulfillment(paid.orderId()).shipCount());
  }

  // ---- the version guard

  @Test
  void aNewerVersionOfTheOrderReplacesTheOlder() throws Exception {
    String order = newOrderId();
    Event cancelled = newEvent(order, "ORDER_CANCELLED", 2);
    Event refunded = newEvent(order, "ORDER_REFUNDED", 4);

    assertEffect("APPLIED", deliver(cancelled.json()));
    assertEffect("APPLIED", deliver(refunded.json()));

    assertEquals(new Fulfillment(4, "ORDER_REFUNDED", 0), consumer.fulfillment(order));
  }

  @Test
  void anOlderVersionArrivingLateIsStaleAndLeavesTheNewerState() throws Exception {
    String order = newOrderId();
    Event cancelled = newEvent(order, "ORDER_CANCELLED", 2);
    Event refunded = newEvent(order, "ORDER_REFUNDED", 4);

    // the relay lets a failed delivery retry later while the events after it go on
    assertEffect("APPLIED", deliver(refunded.json()));
    assertEffect("STALE", deliver(cancelled.json()));

    assertEquals(new Fulfillment(4, "ORDER_REFUNDED", 0), consumer.fulfillment(order));
    assertEquals(List.of("STALE"), effectsOf(cancelled), "a stale arrival is recorded too");
  }

  @Test
  void anotherEventIdForTheSameVersionIsStaleAndDoesNotShipAgain() throws Exception {
    String order = newOrderId();
    Event paid = newEvent(order, "ORDER_PAID", 3);
    Event samePaidUnderANewId = newEvent(order, "ORDER_PAID", 3);

    assertEffect("APPLIED", deliver(paid.json()));
    assertEffect("STALE", deliver(samePaidUnderANewId.json()));

    assertEquals(new Fulfillment(3, "ORDER_PAID", 1), consumer.fulfillment(order));
  }

  // ---- what reconciliation reads: the shipments, through the consumer's own pool

  @Test
  void theShipmentsNameEveryShippedOrderOnceWithItsCount() throws Exception {
    Event paid = newEvent("ORDER_PAID", 3);
    Event cancelled = newEvent("ORDER_CANCELLED", 2);

    assertEffect("APPLIED", deliver(paid.json()));
    assertEffect("DUPLICATE", deliver(paid.json()));
    assertEffect("APPLIED", deliver(cancelled.json()));

    Map<String, Integer> shipped = consumer.shipments().shipCounts();
    assertEquals(1, shipped.get(paid.orderId()));
    assertFalse(shipped.containsKey(cancelled.orderId()), "an order that was not shipped is not a shipment");
  }

  @Test
  void withoutIdempotencyARedeliveryShipsAgainAndTheShipmentsShowIt() throws Exception {
    Event paid = newEvent("ORDER_PAID", 3);
    consumer.switchOffIdempotency();
    try {
      assertEffect("APPLIED", deliver(paid.json()));
      // neither the inbox nor the version guard stops the copy
      assertEffect("APPLIED", deliver(paid.json()));
    } finally {
      consumer.restoreIdempotency();
    }
    assertEquals(2, consumer.shipments().shipCounts().get(paid.orderId()));
    // restored: the copies ran without the inbox, so the next one is stopped by the version guard
    assertEffect("STALE", deliver(paid.json()));
    assertEquals(2, consumer.fulfillment(paid.orderId()).shipCount(), "restored: the next copy ships nothing");
  }

  // ---- what is refused, with nothing stored

  static Stream<Arguments> untrustedBodies() {
    return Stream.of(
        Arguments.of("truncated JSON", "{\"event_id\": 1, \"order_id\":"),
        Arguments.of("not JSON at all", "event 1 for ord-1"),
        Arguments.of("an empty body", ""),
        Arguments.of("a JSON array", "[1, \"ord-1\", \"ORDER_PAID\", 3]"),
        Arguments.of("JSON null", "null"),
        Arguments.of("no event_id", "{\"order_id\": \"ord-x\", \"event_type\": \"ORDER_PAID\", \"order_version\": 3}"),
        Arguments.of("no event_type", "{\"event_id\": 1, \"order_id\": \"ord-x\", \"order_version\": 3}"),
        Arguments.of("event_id as text", paidEvent("\"%d\"", "\"ord-x\"", "3")),
        Arguments.of("a fractional event_id", paidEvent("%d.5", "\"ord-x\"", "3")),
        // would wrap around to event id 5
        Arguments.of("an event_id beyond bigint", paidEvent("18446744073709551621", "\"ord-x\"", "3")),
        Arguments.of("order_id as a number", paidEvent("%d", "17", "3")),
        Arguments.of("order_version as text", paidEvent("%d", "\"ord-x\"", "\"3\"")),
        // would wrap around to version 3
        Arguments.of("an order_version beyond integer", paidEvent("%d", "\"ord-x\"", "4294967299")));
  }

  /** An ORDER_PAID event with these raw JSON values; "%d" in the event id becomes a fresh id. */
  private static String paidEvent(String eventId, String orderId, String orderVersion) {
    return "{\"event_id\": " + eventId.replace("%d", Long.toString(NEXT_ID.incrementAndGet())) + ", \"order_id\": "
        + orderId + ", \"event_type\": \"ORDER_PAID\", \"order_version\": " + orderVersion + ", \"payload\": \"{}\"}";
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("untrustedBodies")
  void aBodyThatIsNotAnEventIsRefusedWith400AndNothingIsStored(String what, String body) throws Exception {
    Stored before = consumer.stored();

    Answer answer = deliver(body);

    assertProblem(400, answer.body().path("code").asText(), answer);
    assertTrue(Set.of("BAD_EVENT", "MALFORMED_JSON").contains(answer.body().path("code").asText()), answer.toString());
    assertEquals(before, consumer.stored());
  }

  // ---- only a relay's delivery is read

  static Stream<Arguments> forgedDeliveries() {
    return Stream.of(
        Arguments.of("text/plain, as a web page may send without a preflight", "text/plain", null, 415,
            "UNSUPPORTED_MEDIA_TYPE"),
        Arguments.of("no Content-Type", null, null, 415, "UNSUPPORTED_MEDIA_TYPE"),
        Arguments.of("JSON without a signature", "application/json", null, 401, "BAD_SIGNATURE"),
        Arguments.of("JSON signed with another key", "application/json",
            new EventDelivery("another-secret-0123456789abcdef0123456789"), 401, "BAD_SIGNATURE"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("forgedDeliveries")
  void aDeliveryNotSignedByARelayIsRefusedAndChangesNothing(String what, String contentType, EventDelivery signer,
      int status, String code) throws Exception {
    // a real event's id and a version above any: it would ship, then shadow every later event of the order
    Event paid = newEvent("ORDER_PAID", Integer.MAX_VALUE);
    Stored before = consumer.stored();
    HttpRequest.Builder forged = HttpRequest.newBuilder(URI.create(consumer.url()))
        .POST(HttpRequest.BodyPublishers.ofString(paid.json()));
    if (contentType != null) forged.header("Content-Type", contentType);
    if (signer != null) forged.header(EventDelivery.HEADER, signer.sign(paid.json().getBytes(StandardCharsets.UTF_8)));

    assertProblem(status, code, send(forged));
    assertEquals(before, consumer.stored());
    assertEffect("APPLIED", deliver(paid.json())); // the event id was not claimed
  }

  @ParameterizedTest
  @ValueSource(strings = {"GET", "PUT", "DELETE"})
  void onlyPostIsAnsweredAndNothingElseIsStored(String method) throws Exception {
    Event event = newEvent("ORDER_PAID", 3);
    Stored before = consumer.stored();

    Answer answer = send(HttpRequest.newBuilder(URI.create(consumer.url()))
        .method(method, HttpRequest.BodyPublishers.ofString(event.json())));

    assertProblem(405, "METHOD_NOT_ALLOWED", answer);
    assertEquals(before, consumer.stored());
    assertEffect("APPLIED", deliver(event.json()));
  }

  // ---- a failure is a 500 the sender can retry

  @Test
  void aFailingDatabaseAnswers500RecordsNothingAndTheRetryApplies() throws Exception {
    Event paid = newEvent("ORDER_PAID", 3);
    Stored before = consumer.stored();
    consumer.failEveryEvent();
    try {
      Answer failed = deliver(paid.json());

      assertProblem(500, "INTERNAL", failed);
      assertEquals(before, consumer.stored());
    } finally {
      consumer.heal();
    }
    // the failed attempt did not take the event id: the relay's retry is applied, not a DUPLICATE
    assertEffect("APPLIED", deliver(paid.json()));
    assertEquals(1, consumer.fulfillment(paid.orderId()).shipCount());
  }

  // ---- its own schema

  @Test
  void theConsumersJdbcUrlNamesItsOwnSchema() {
    assertEquals("jdbc:postgresql://db:5432/flashsale?currentSchema=fulfillment",
        FulfillmentConsumer.jdbcUrl("jdbc:postgresql://db:5432/flashsale"));
    assertEquals("jdbc:postgresql://db:5432/flashsale?sslmode=require&currentSchema=fulfillment",
        FulfillmentConsumer.jdbcUrl("jdbc:postgresql://db:5432/flashsale?sslmode=require"));
  }

  // ---- events and HTTP

  /** An order event as the relay sends it. */
  private record Event(long eventId, String orderId, String eventType, int orderVersion) {
    String json() {
      try {
        return JSON.writeValueAsString(Map.of("event_id", eventId, "order_id", orderId, "event_type", eventType,
            "order_version", orderVersion, "payload", "{\"order_id\":\"" + orderId + "\"}"));
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  private static String newOrderId() {
    return "ord-" + NEXT_ID.incrementAndGet();
  }

  private static Event newEvent(String eventType, int orderVersion) {
    return newEvent(newOrderId(), eventType, orderVersion);
  }

  private static Event newEvent(String orderId, String eventType, int orderVersion) {
    return new Event(NEXT_ID.incrementAndGet(), orderId, eventType, orderVersion);
  }

  private static List<String> effectsOf(Event e) {
    return consumer.effectsByEvent().getOrDefault(e.eventId(), List.of());
  }

  private record Answer(int status, String contentType, JsonNode body) {
    String effect() {
      return body.path("effect").asText(null);
    }
  }

  /** As a relay delivers: JSON, signed with the delivery secret. */
  private static Answer deliver(String body) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(consumer.url()))
        .header("Content-Type", "application/json")
        .header(EventDelivery.HEADER, SIGNER.sign(body.getBytes(StandardCharsets.UTF_8)))
        .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  private static final EventDelivery SIGNER = new EventDelivery(RunningConsumer.DELIVERY_SECRET);

  private static Answer send(HttpRequest.Builder request) throws IOException, InterruptedException {
    HttpResponse<String> r = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), JSON.readTree(r.body()));
  }

  /** An error answer is an RFC 9457 problem detail, like the API's. */
  private static void assertProblem(int status, String code, Answer answer) {
    assertEquals(status, answer.status(), answer.toString());
    assertEquals("application/problem+json", answer.contentType(), answer.toString());
    JsonNode p = answer.body();
    assertEquals(code, p.path("code").asText(), answer.toString());
    assertEquals(code, p.path("error").asText(), answer.toString());
    assertEquals("https://flashsale.dev/problems/" + code.toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
        p.path("type").asText(), answer.toString());
    assertEquals(io.flashsale.problem.Problem.reasonPhrase(status), p.path("title").asText(), answer.toString());
    assertEquals(status, p.path("status").asInt(), answer.toString());
    assertTrue(p.path("detail").isTextual(), answer.toString());
    assertFalse(p.has("message"), answer.toString());
  }

  private static void assertEffect(String effect, Answer answer) {
    assertEquals(200, answer.status(), answer.toString());
    assertEquals("application/json", answer.contentType(), answer.toString());
    assertEquals(effect, answer.effect(), answer.toString());
  }
}
