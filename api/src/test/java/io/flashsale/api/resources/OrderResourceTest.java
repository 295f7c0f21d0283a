package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.reset;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.auth.AuthDynamicFeature;
import io.dropwizard.auth.AuthValueFactoryProvider;
import io.dropwizard.testing.junit5.DropwizardExtensionsSupport;
import io.dropwizard.testing.junit5.ResourceExtension;
import io.flashsale.api.auth.Caller;
import io.flashsale.api.auth.JsonUnauthorizedHandler;
import io.flashsale.api.auth.SessionAuthFilter;
import io.flashsale.api.auth.TokenAuthenticator;
import io.flashsale.api.auth.TokenService;
import io.flashsale.api.core.BodyLimit;
import io.flashsale.api.core.ErrorMappers;
import io.flashsale.api.core.OrderCsv;
import io.flashsale.api.observe.OrderMdc;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries.TimelineEntry;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.Principals;
import io.flashsale.persistence.Skus;
import io.flashsale.workflows.CommandResult;
import io.flashsale.workflows.Orders;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.client.WorkflowNotFoundException;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.client.Invocation;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.mockito.MockMakers;

/**
 * The order resource through Jersey in memory, behind the filters and error mappers RestApi
 * registers, with the workflow client, the queries and the SKUs mocked: what reaches them (or
 * does not), and how their answers become statuses and bodies.
 */
@ExtendWith(DropwizardExtensionsSupport.class)
class OrderResourceTest {
  private static final String TENANT = "t1";
  private static final String SUBJECT = "user-1";
  private static final String ORDER_ID = "ord-0001";
  private static final String WORKFLOW_ID = "order:t1:user-1:k1";
  /** One character outside the BMP: two UTF-16 units, a surrogate pair. */
  private static final String GIFT = "\uD83C\uDF81";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TokenService TOKENS = new TokenService("order-resource-test-secret", 300, Clock.systemUTC());

  // the collaborators are final classes: the inline mock maker, per mock
  private static final Orders ORDERS = finalClassMock(Orders.class);
  private static final OrderQueries QUERIES = finalClassMock(OrderQueries.class);
  private static final Skus SKUS = finalClassMock(Skus.class);
  private static final Principals PRINCIPALS = finalClassMock(Principals.class);

  static final OrderResource RESOURCE = new OrderResource(ORDERS, QUERIES, SKUS, 4, 2);
  static final ResourceExtension API = api(RESOURCE);
  /** No room for a create or an export: the refusals that protect the engine and the pool. */
  static final ResourceExtension FULL = api(new OrderResource(ORDERS, QUERIES, SKUS, 0, 0));

  private static <T> T finalClassMock(Class<T> type) {
    return mock(type, withSettings().mockMaker(MockMakers.INLINE));
  }

  /** The Jersey side of RestApi.register, without Dropwizard's own exception mappers (as configured). */
  private static ResourceExtension api(OrderResource resource) {
    return ResourceExtension.builder()
        .setRegisterDefaultExceptionMappers(false)
        .addProvider(new AuthDynamicFeature(new SessionAuthFilter.Builder(TOKENS)
            .setAuthenticator(new TokenAuthenticator(TOKENS, PRINCIPALS))
            .setPrefix("Bearer")
            .setUnauthorizedHandler(new JsonUnauthorizedHandler())
            .buildAuthFilter()))
        .addProvider(new AuthValueFactoryProvider.Binder<>(Caller.class))
        .addProvider(new BodyLimit(64 * 1024))
        .addProvider(new OrderMdc.JerseyFilter())
        .addProvider(new ErrorMappers.MalformedJson())
        .addProvider(new ErrorMappers.WebErrors())
        .addProvider(new ErrorMappers.DatabaseUnavailable())
        .addProvider(new ErrorMappers.Unexpected())
        .addResource(resource)
        .build();
  }

  /** The engine answers each create at once with {@code answer} (a call this request started). */
  private static void engineAnswers(CreateResult answer) {
    when(ORDERS.startCreate(any())).thenAnswer(inv -> new Orders.CreateCall("order:wf", inv.getArgument(0),
        java.util.concurrent.CompletableFuture.completedFuture(answer), true));
    when(ORDERS.await(any())).thenAnswer(inv -> ((Orders.CreateCall) inv.getArgument(0)).answer().join());
  }

  @BeforeEach
  void forgetEarlierCalls() {
    reset(ORDERS, QUERIES, SKUS, PRINCIPALS);
    when(PRINCIPALS.standing(any(), any())).thenReturn(Principals.Standing.CLEAR);
  }

  // ---------------------------------------------------------------- helpers

  private static String bearer(String tenant, String subject) {
    return "Bearer " + TOKENS.issue(tenant, subject);
  }

  private static Invocation.Builder request(ResourceExtension api, String path, String authorization) {
    Invocation.Builder b = api.target(path).request();
    return authorization == null ? b : b.header("Authorization", authorization);
  }

  private static Invocation.Builder asCaller(String path) {
    return request(API, path, bearer(TENANT, SUBJECT));
  }

  private static Response postJson(Invocation.Builder b, String json) {
    return b.post(Entity.entity(json, MediaType.APPLICATION_JSON_TYPE));
  }

  private static Response create(String json) {
    return postJson(asCaller("/orders"), json);
  }

  private static JsonNode json(Response r) {
    return parse(r.readEntity(String.class));
  }

  private static JsonNode parse(String body) {
    try {
      return JSON.readTree(body);
    } catch (java.io.IOException e) {
      throw new AssertionError("not JSON: " + body, e);
    }
  }

  /**
   * The shape every refusal has: an RFC 9457 problem detail as application/problem+json, {type,
   * title, status, detail, code, error} only, the given code (error its alias), nothing internal;
   * a 401 says how to authenticate.
   */
  private static JsonNode assertError(Response r, int status, String code) {
    String body = r.readEntity(String.class);
    assertEquals(status, r.getStatus(), body);
    assertEquals(MediaType.valueOf("application/problem+json"), r.getMediaType(), body);
    assertNoInternals(body);
    JsonNode error = parse(body);
    assertEquals(Set.of("type", "title", "status", "detail", "code", "error"), fieldNames(error), body);
    assertEquals(code, error.get("code").asText(), body);
    assertEquals(code, error.get("error").asText(), body);
    assertEquals("https://flashsale.dev/problems/" + code.toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
        error.get("type").asText(), body);
    assertEquals(r.getStatusInfo().getReasonPhrase(), error.get("title").asText(), body);
    assertEquals(status, error.get("status").asInt(), body);
    assertTrue(error.get("detail").isTextual(), body);
    if (status == 401) {
      assertTrue(String.valueOf(r.getHeaderString("WWW-Authenticate")).startsWith("Bearer realm=\"flashsale\""),
          "401 with the buyer API's challenge: " + r.getHeaderString("WWW-Authenticate"));
    }
    return error;
  }

  private static void assertNoInternals(String body) {
    for (String internal : List.of("Exception", "\tat ", ".java:", "io.flashsale.", "org.glassfish.", "jakarta.")) {
      assertFalse(body.contains(internal), "internals in " + body);
    }
  }

  private static Set<String> fieldNames(JsonNode n) {
    Set<String> names = new java.util.HashSet<>();
    n.fieldNames().forEachRemaining(names::add);
    return names;
  }

  private static OrderDetails order(String id, String tenant, String subject, String status) {
    TimelineEntry created = new TimelineEntry(null, OrderStatus.CREATED, 1, "create", "2026-11-30T12:00:00Z");
    return new OrderDetails(id, tenant, subject, "k1", OrderStatus.valueOf(status), 1, "sku-1", 1, 1990, null,
        id + "/r1", "HELD", WORKFLOW_ID, "2026-11-30T12:00:00Z", List.of(created));
  }

  private static OrderDetails ownOrder(String status) {
    return order(ORDER_ID, TENANT, SUBJECT, status);
  }

  private static void verifyNoCollaboratorCalled() {
    verifyNoInteractions(ORDERS, QUERIES, SKUS);
  }

  // ---------------------------------------------------------------- create: bad input

  /**
   * A create body as raw JSON values by field, so a case changes one field of a body that is
   * otherwise accepted (see {@link #theBaseBodyReachesTheWorkflowAsSent}).
   */
  private static final class Body {
    private final Map<String, String> fields = new LinkedHashMap<>();

    static Body valid() {
      Body b = new Body();
      b.fields.put("request_key", "\"k1\"");
      b.fields.put("sku", "\"sku-1\"");
      b.fields.put("quantity", "1");
      return b;
    }

    Body with(String field, String rawJson) {
      fields.put(field, rawJson);
      return this;
    }

    Body without(String field) {
      fields.remove(field);
      return this;
    }

    String json() {
      return fields.entrySet().stream().map(e -> "\"" + e.getKey() + "\":" + e.getValue())
          .collect(Collectors.joining(",", "{", "}"));
    }
  }

  record BadBody(String name, String json, String code) {
    @Override
    public String toString() {
      return name + " -> " + code;
    }
  }

  private static BadBody bad(String name, Body body, String code) {
    return new BadBody(name, body.json(), code);
  }

  static Stream<BadBody> badBodies() {
    String longText = "\"" + "x".repeat(201) + "\"";
    return Stream.of(
        bad("quantity 0", Body.valid().with("quantity", "0"), "INVALID_FIELD"),
        bad("quantity 4", Body.valid().with("quantity", "4"), "INVALID_FIELD"),
        bad("quantity -1", Body.valid().with("quantity", "-1"), "INVALID_FIELD"),
        // 2^32 + 1 and 2^64 + 1 would wrap to 1 if narrowed before the range check
        bad("quantity 2^32+1", Body.valid().with("quantity", "4294967297"), "INVALID_FIELD"),
        bad("quantity 2^64+1", Body.valid().with("quantity", "18446744073709551617"), "INVALID_FIELD"),
        bad("quantity 1e400", Body.valid().with("quantity", "1e400"), "INVALID_FIELD"),
        bad("quantity 1.5", Body.valid().with("quantity", "1.5"), "INVALID_FIELD"),
        bad("quantity as text", Body.valid().with("quantity", "\"1\""), "INVALID_FIELD"),
        bad("quantity true", Body.valid().with("quantity", "true"), "INVALID_FIELD"),
        bad("quantity missing", Body.valid().without("quantity"), "MISSING_FIELD"),
        bad("quantity null", Body.valid().with("quantity", "null"), "MISSING_FIELD"),
        bad("request_key missing", Body.valid().without("request_key"), "MISSING_FIELD"),
        bad("request_key null", Body.valid().with("request_key", "null"), "MISSING_FIELD"),
        bad("request_key empty", Body.valid().with("request_key", "\"\""), "INVALID_FIELD"),
        bad("request_key with a space", Body.valid().with("request_key", "\"k 1\""), "INVALID_FIELD"),
        bad("request_key of 65", Body.valid().with("request_key", "\"" + "k".repeat(65) + "\""), "INVALID_FIELD"),
        bad("request_key a number", Body.valid().with("request_key", "7"), "INVALID_FIELD"),
        bad("sku missing", Body.valid().without("sku"), "MISSING_FIELD"),
        bad("sku with a slash", Body.valid().with("sku", "\"sku/1\""), "INVALID_FIELD"),
        bad("sku an object", Body.valid().with("sku", "{}"), "INVALID_FIELD"),
        bad("NUL in note", Body.valid().with("note", "\"gift\\u0000\""), "INVALID_TEXT"),
        bad("newline in note", Body.valid().with("note", "\"a\\nb\""), "INVALID_TEXT"),
        bad("lone surrogate in note", Body.valid().with("note", "\"\\ud800\""), "INVALID_TEXT"),
        bad("NUL in request_key", Body.valid().with("request_key", "\"k\\u0000\""), "INVALID_TEXT"),
        bad("note of 201", Body.valid().with("note", longText), "INVALID_FIELD"),
        bad("note of 201 emoji", Body.valid().with("note", "\"" + GIFT.repeat(201) + "\""), "INVALID_FIELD"),
        bad("unknown field", Body.valid().with("coupon", "\"FREE\""), "UNKNOWN_FIELD"),
        bad("tenant in body", Body.valid().with("tenant", "\"t2\""), "IDENTITY_IN_BODY"),
        bad("subject in body", Body.valid().with("subject", "\"user-2\""), "IDENTITY_IN_BODY"),
        new BadBody("array", "[]", "BODY_REQUIRED"),
        new BadBody("JSON null", "null", "BODY_REQUIRED"),
        new BadBody("a string", "\"order\"", "BODY_REQUIRED"),
        new BadBody("empty body", "", "BODY_REQUIRED"),
        new BadBody("truncated JSON", "{\"sku\":", "MALFORMED_JSON"),
        new BadBody("trailing comma", "{\"sku\":\"sku-1\",}", "MALFORMED_JSON"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badBodies")
  void badInputIs400WithItsCodeAndReachesNoCollaborator(BadBody c) {
    assertError(create(c.json()), 400, c.code());
    verifyNoCollaboratorCalled();
  }

  @Test
  void theBaseBodyReachesTheWorkflowAsSent() {
    acceptCreates(CreateOutcome.CREATED);
    assertEquals(201, create(Body.valid().json()).getStatus());
    verify(ORDERS).startCreate(new CreateOrder(TENANT, SUBJECT, "k1", "sku-1", 1, null));
  }

  @Test
  void valuesAtTheirLimitsAreAccepted() {
    acceptCreates(CreateOutcome.CREATED);
    String key = "k".repeat(64);
    // the note's limit counts characters: 200 emoji (400 UTF-16 units, each a surrogate pair) fit
    String note = GIFT.repeat(200);
    Response r = create(Body.valid().with("request_key", "\"" + key + "\"").with("quantity", "3")
        .with("note", "\"" + note + "\"").json());
    assertEquals(201, r.getStatus(), r.readEntity(String.class));
    verify(ORDERS).startCreate(new CreateOrder(TENANT, SUBJECT, key, "sku-1", 3, note));
  }

  @Test
  void anIntegralDecimalIsThatInteger() {
    // JSON Schema's integer, as the contract says: 2.0 is 2
    acceptCreates(CreateOutcome.CREATED);
    assertEquals(201, create(Body.valid().with("quantity", "2.0").json()).getStatus());
    verify(ORDERS).startCreate(new CreateOrder(TENANT, SUBJECT, "k1", "sku-1", 2, null));
  }

  @Test
  void aBodyThatIsNotJsonIs415() {
    Response r = asCaller("/orders").post(Entity.entity(Body.valid().json(), MediaType.TEXT_PLAIN_TYPE));
    assertError(r, 415, "UNSUPPORTED_MEDIA_TYPE");
    verifyNoCollaboratorCalled();
  }

  // ---------------------------------------------------------------- authentication

  /** One call of each operation, as far as authentication is concerned. */
  record Call(String method, String path) {
    Response send(String authorization) {
      Invocation.Builder b = request(API, path, authorization);
      // a body that is not even JSON: authentication answers before anything reads it
      return "POST".equals(method) ? b.post(Entity.entity("{not json", MediaType.APPLICATION_JSON_TYPE)) : b.get();
    }

    @Override
    public String toString() {
      return method + " " + path;
    }
  }

  static Stream<Call> everyOperation() {
    return Stream.of(new Call("POST", "/orders"), new Call("GET", "/orders"), new Call("GET", "/orders/" + ORDER_ID),
        new Call("POST", "/orders/" + ORDER_ID + "/pay"), new Call("POST", "/orders/" + ORDER_ID + "/cancel"),
        new Call("GET", "/orders/export.csv"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyOperation")
  void withoutAValidBearerTokenEveryOperationIs401(Call call) {
    String token = TOKENS.issue(TENANT, SUBJECT);
    String forged = token.substring(0, token.length() - 4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
    String expired = TOKENS.issue(TENANT, SUBJECT, Clock.systemUTC().instant().getEpochSecond() - 5);
    List<String> refused = new ArrayList<>();
    refused.add(null);
    refused.addAll(List.of("Bearer " + forged, "Bearer " + expired, "Bearer ", "Basic " + token, token));
    for (String authorization : refused) {
      Response r = call.send(authorization);
      // a token presented and refused is invalid_token; none (or not a bearer token) only the challenge
      boolean presented = authorization != null && authorization.startsWith("Bearer ") && authorization.length() > 7;
      assertEquals(presented ? "Bearer realm=\"flashsale\", error=\"invalid_token\"" : "Bearer realm=\"flashsale\"",
          r.getHeaderString("WWW-Authenticate"), String.valueOf(authorization));
      assertError(r, 401, "UNAUTHENTICATED");
    }
    verifyNoCollaboratorCalled();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyOperation")
  void aRevokedPrincipalIs403WhateverItsToken(Call call) {
    when(PRINCIPALS.standing(TENANT, SUBJECT)).thenReturn(new Principals.Standing(true, System.currentTimeMillis()));
    assertError(call.send(bearer(TENANT, SUBJECT)), 403, "REVOKED");
    verifyNoCollaboratorCalled();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("everyOperation")
  void aTokenIssuedBeforeALogoutOrRevocationIs401AndALaterOneIsServed(Call call) throws Exception {
    String before = bearer(TENANT, SUBJECT);
    Thread.sleep(2);
    when(PRINCIPALS.standing(TENANT, SUBJECT)).thenReturn(new Principals.Standing(false, System.currentTimeMillis()));
    Response refused = call.send(before);
    assertError(refused, 401, "SESSION_ENDED");
    assertEquals("Bearer realm=\"flashsale\", error=\"invalid_token\"", refused.getHeaderString("WWW-Authenticate"));
    verifyNoCollaboratorCalled();
    Thread.sleep(2);
    Response later = call.send(bearer(TENANT, SUBJECT));
    assertTrue(later.getStatus() != 401 && later.getStatus() != 403, "a token issued after it is served: " + later.getStatus());
  }

  // ---------------------------------------------------------------- ownership

  /** The three operations on one order id; the body is the resource's answer. */
  enum OnOrder {
    GET, PAY, CANCEL;

    Response send(String id) {
      Invocation.Builder b = asCaller("/orders/" + id + (this == GET ? "" : "/" + name().toLowerCase()));
      return this == GET ? b.get() : b.post(Entity.json(""));
    }
  }

  @ParameterizedTest
  @EnumSource(OnOrder.class)
  void anotherPrincipalsOrderAnswersExactlyLikeAMissingOne(OnOrder op) {
    when(QUERIES.get(ORDER_ID)).thenReturn(null);
    Response missing = op.send(ORDER_ID);
    String missingBody = missing.readEntity(String.class);
    // same subject name in another tenant, another subject in the same tenant
    for (OrderDetails theirs : List.of(order(ORDER_ID, "t2", SUBJECT, "CREATED"), order(ORDER_ID, TENANT, "user-2", "CREATED"))) {
      when(QUERIES.get(ORDER_ID)).thenReturn(theirs);
      Response r = op.send(ORDER_ID);
      assertEquals(404, r.getStatus());
      assertEquals(missingBody, r.readEntity(String.class), "no existence oracle: the body of a missing order");
      assertEquals(missing.getHeaders().keySet(), r.getHeaders().keySet(), "and its headers");
    }
    verifyNoInteractions(ORDERS);
  }

  @ParameterizedTest
  @EnumSource(OnOrder.class)
  void anUnknownOrderIs404(OnOrder op) {
    assertError(op.send("ord-0404"), 404, "ORDER_NOT_FOUND");
    verify(QUERIES).get("ord-0404");
    verifyNoInteractions(ORDERS);
  }

  @ParameterizedTest
  @EnumSource(OnOrder.class)
  void aMalformedOrderIdIs404WithoutALookup(OnOrder op) {
    for (String id : List.of("ord-1", "ord-0001x", "ORD-0001", "ord-1234567890123")) {
      assertError(op.send(id), 404, "ORDER_NOT_FOUND");
    }
    verifyNoCollaboratorCalled();
  }

  @Test
  void anOwnOrderIsShownWithItsTimeline() {
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("PAID"));
    Response r = OnOrder.GET.send(ORDER_ID);
    assertEquals(200, r.getStatus());
    JsonNode body = json(r);
    assertEquals(ORDER_ID, body.get("order_id").asText());
    assertEquals("PAID", body.get("status").asText());
    assertEquals("CREATED", body.at("/timeline/0/to_status").asText());
  }

  // ---------------------------------------------------------------- create: outcomes

  /** docs/DESIGN.md §REST API: the status each workflow outcome is answered with. */
  private static final Map<CreateOutcome, Integer> STATUS_OF = new EnumMap<>(Map.of(
      CreateOutcome.CREATED, 201, CreateOutcome.REPLAY, 200, CreateOutcome.SOLD_OUT, 409,
      CreateOutcome.USER_LIMIT, 409, CreateOutcome.KEY_REUSED, 422, CreateOutcome.UNKNOWN_SKU, 404));

  /** Stock left, no earlier order for the key, and the workflow answers with this outcome. */
  private static void acceptCreates(CreateOutcome outcome) {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(5);
    boolean madeOrder = outcome == CreateOutcome.CREATED || outcome == CreateOutcome.REPLAY;
    OrderView view = madeOrder
        ? new OrderView(ORDER_ID, TENANT, SUBJECT, "sku-1", 1, 1990, OrderStatus.CREATED, 1, ORDER_ID + "/r1")
        : null;
    engineAnswers(new CreateResult(outcome, view, List.of(), null));
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("PAID"));
  }

  @Test
  void the201IsBuiltFromTheCreateResultAndEqualsWhatAReadOfTheRowAnswers() throws Exception {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(5);
    OrderView view = new OrderView(ORDER_ID, TENANT, SUBJECT, "sku-1", 1, 1990, OrderStatus.CREATED, 1, ORDER_ID + "/r1");
    engineAnswers(new CreateResult(CreateOutcome.CREATED, view,
        List.of(new io.flashsale.domain.Transition(null, OrderStatus.CREATED, 1, "create")), "2026-11-30T12:00:00Z"));
    Response r = create(Body.valid().json());
    assertEquals(201, r.getStatus());
    JsonNode built = json(r);
    verify(QUERIES, never()).get(anyString());
    // what the row, read back, answers for the same order (a replay reads it so)
    JsonNode read = new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(
        OrderResource.createdAnswer(CreateOutcome.CREATED, ownOrder("CREATED")));
    assertEquals(read.toString(), built.toString());
  }

  @Test
  void everyCreateOutcomeHasAStatusHere() {
    assertEquals(EnumSet.allOf(CreateOutcome.class), STATUS_OF.keySet());
  }

  @ParameterizedTest
  @EnumSource(CreateOutcome.class)
  void eachWorkflowOutcomeIsAnsweredWithItsStatus(CreateOutcome outcome) {
    acceptCreates(outcome);
    Response r = create(Body.valid().json());
    int status = STATUS_OF.get(outcome);
    assertEquals(status, r.getStatus());
    JsonNode body = json(r);
    if (status == 201 || status == 200) {
      // the first call and a call that raced it alike: the order as its create made it, not as it is now;
      // only the outcome, and the replay's header, tell them apart
      assertEquals(outcome.name(), body.get("outcome").asText());
      assertEquals(ORDER_ID, body.get("order_id").asText());
      assertEquals("CREATED", body.get("status").asText());
      assertEquals(1, body.get("version").asInt());
      assertEquals(outcome == CreateOutcome.REPLAY ? "true" : null, r.getHeaderString("Idempotent-Replayed"));
    } else {
      assertEquals(Set.of("outcome"), fieldNames(body), body.toString());
      assertEquals(outcome.name(), body.get("outcome").asText());
      assertNull(r.getHeaderString("Idempotent-Replayed"));
    }
  }

  @Test
  void anUnknownSkuIs404BeforeTheWorkflow() {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(-1);
    Response r = create(Body.valid().json());
    assertEquals(404, r.getStatus());
    assertEquals("UNKNOWN_SKU", json(r).get("outcome").asText());
    verifyNoInteractions(ORDERS);
  }

  @Test
  void aSoldOutSkuIs409BeforeTheWorkflow() {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(0);
    Response r = create(Body.valid().json());
    assertEquals(409, r.getStatus());
    assertEquals("SOLD_OUT", json(r).get("outcome").asText());
    verify(QUERIES).keyedOrder(TENANT, SUBJECT, "k1");
    verifyNoInteractions(ORDERS);
  }

  @Test
  void aRefusedCreateIsCountedNotLoggedWhileAnOrdersAnswerIsLogged() {
    ch.qos.logback.classic.Logger requests =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("io.flashsale.api.requests");
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
        new ch.qos.logback.core.read.ListAppender<>();
    lines.start();
    requests.addAppender(lines);
    try {
      when(SKUS.remaining(TENANT, "sku-1")).thenReturn(0);
      long soldOut = RESOURCE.refused().get(CreateOutcome.SOLD_OUT).getCount();
      assertEquals(409, create(Body.valid().json()).getStatus());
      assertEquals(409, create(Body.valid().json()).getStatus());
      assertEquals(soldOut + 2, RESOURCE.refused().get(CreateOutcome.SOLD_OUT).getCount());
      assertTrue(lines.list.stream().noneMatch(e -> e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.INFO)),
          "no INFO line per refusal: " + lines.list);

      when(SKUS.remaining(TENANT, "sku-1")).thenReturn(5);
      keyHasItsOrder(new CreateOrder(TENANT, SUBJECT, "k1", "sku-1", 1, null));
      assertEquals(200, create(Body.valid().json()).getStatus());
      assertTrue(lines.list.stream().anyMatch(e -> e.getLevel() == ch.qos.logback.classic.Level.INFO
          && e.getFormattedMessage().equals("POST /orders -> 200")), "a create answered with its order is logged: " + lines.list);
    } finally {
      requests.detachAppender(lines);
    }
  }

  /** The key k1 already has ORDER_ID, made from this body. */
  private static void keyHasItsOrder(CreateOrder madeFrom) {
    when(QUERIES.keyedOrder(TENANT, SUBJECT, "k1")).thenReturn(new OrderQueries.KeyedOrder(ORDER_ID, madeFrom.payload()));
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("PAID"));
  }

  @Test
  void aRetryOfAnOrderedKeyIs200ReplayFromItsRowWithoutTheEngine() {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(5);
    keyHasItsOrder(new CreateOrder(TENANT, SUBJECT, "k1", "sku-1", 1, null));
    Response r = create(Body.valid().json());
    assertEquals(200, r.getStatus());
    assertEquals("true", r.getHeaderString("Idempotent-Replayed"));
    JsonNode body = json(r);
    assertEquals("REPLAY", body.get("outcome").asText());
    assertEquals(ORDER_ID, body.get("order_id").asText());
    // the fields the first answer carried (the order as its create made it), not the PAID order of now
    assertEquals("CREATED", body.get("status").asText());
    assertEquals(1, body.get("version").asInt());
    assertEquals(ORDER_ID + "/r1", body.at("/reservation/key").asText());
    verifyNoInteractions(ORDERS);
  }

  @Test
  void aRetryOfAnOrderedKeyIsAnsweredEvenWhenSoldOut() {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(0);
    keyHasItsOrder(new CreateOrder(TENANT, SUBJECT, "k1", "sku-1", 1, null));
    Response r = create(Body.valid().json());
    assertEquals(200, r.getStatus());
    assertEquals("REPLAY", json(r).get("outcome").asText());
    verifyNoInteractions(ORDERS);
  }

  @Test
  void anOrderedKeyWithAnotherBodyIs422KeyReusedWithoutTheEngine() {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(5);
    keyHasItsOrder(new CreateOrder(TENANT, SUBJECT, "k1", "sku-1", 2, null));
    Response r = create(Body.valid().json());
    assertEquals(422, r.getStatus());
    assertEquals("{\"outcome\":\"KEY_REUSED\"}", r.readEntity(String.class));
    assertNull(r.getHeaderString("Idempotent-Replayed"));
    verifyNoInteractions(ORDERS);
  }

  @Test
  void tooManyCreatesInFlightIs503OverloadedWithoutTheWorkflow() {
    when(SKUS.remaining(TENANT, "sku-1")).thenReturn(5);
    Response r = postJson(request(FULL, "/orders", bearer(TENANT, SUBJECT)), Body.valid().json());
    assertEquals(503, r.getStatus());
    assertEquals("1", r.getHeaderString("Retry-After"));
    assertEquals("OVERLOADED", json(r).get("outcome").asText());
    verify(ORDERS, never()).startCreate(any()); // asked only whether the key has a call in flight here
    verify(ORDERS, never()).await(any());
  }

  @Test
  void aDatabaseThatDoesNotAnswerIs503NotA500() {
    java.sql.SQLException refused = new java.sql.SQLException("Connection to localhost:5432 refused", "08001");
    when(SKUS.remaining(any(), any())).thenThrow(new io.flashsale.persistence.Database.DatabaseException(refused));
    Response r = create(Body.valid().json());
    assertEquals("1", r.getHeaderString("Retry-After"));
    assertError(r, 503, "DATABASE_UNAVAILABLE");
    verifyNoInteractions(ORDERS);

    // the caller's revocation check reads the database before any resource runs
    when(PRINCIPALS.standing(any(), any())).thenThrow(new io.flashsale.persistence.Database.DatabaseException(refused));
    assertError(asCaller("/orders/ord-0001").get(), 503, "DATABASE_UNAVAILABLE");
  }

  @Test
  void aDatabaseErrorThatARetryCannotMendIsA500NotA503() {
    // a missing table (a bad migration): telling clients to retry every second would only hide it
    java.sql.SQLException noTable = new java.sql.SQLException("relation \"sku\" does not exist", "42P01");
    when(SKUS.remaining(any(), any())).thenThrow(new io.flashsale.persistence.Database.DatabaseException(noTable));
    Response r = create(Body.valid().json());
    assertError(r, 500, "INTERNAL");
    assertNull(r.getHeaderString("Retry-After"));

    // a pool that timed out waiting for a connection says no SQLState: that is an outage
    org.mockito.Mockito.doThrow(new io.flashsale.persistence.Database.DatabaseException(
        new java.sql.SQLTransientConnectionException("Connection is not available, request timed out after 5000ms")))
        .when(SKUS).remaining(any(), any());
    assertError(create(Body.valid().json()), 503, "DATABASE_UNAVAILABLE");
  }

  @Test
  void aDataErrorStaysA500() {
    java.sql.SQLException tooLong = new java.sql.SQLException("value too long", "22001");
    when(SKUS.remaining(any(), any())).thenThrow(new io.flashsale.persistence.Database.DataError(tooLong));
    assertError(create(Body.valid().json()), 500, "INTERNAL");
  }

  @Test
  void anEngineThatDoesNotAnswerIs503AndHoldsItsPlaceUntilTheCallEnds() {
    acceptCreates(CreateOutcome.CREATED);
    List<java.util.concurrent.CompletableFuture<CreateResult>> calls = new java.util.ArrayList<>();
    when(ORDERS.startCreate(any())).thenAnswer(inv -> {
      java.util.concurrent.CompletableFuture<CreateResult> call = new java.util.concurrent.CompletableFuture<>();
      calls.add(call);
      return new Orders.CreateCall("order:wf", inv.getArgument(0), call, true);
    });
    doThrow(new Orders.DeadlineExceeded("create", Duration.ofMillis(1500))).when(ORDERS).await(any());
    try {
      // the bound (4) counts the calls the engine still works on: answered 503 at the deadline, each holds its place
      for (int i = 0; i < 4; i++) {
        Response r = create(Body.valid().json());
        assertEquals("1", r.getHeaderString("Retry-After"));
        assertError(r, 503, "ENGINE_UNAVAILABLE");
      }
      Response full = create(Body.valid().json());
      assertEquals(503, full.getStatus());
      assertEquals("OVERLOADED", json(full).get("outcome").asText(), "no place left while the engine works on 4");
      verify(ORDERS, times(4)).startCreate(any());
      // the engine ends the calls (here: fails them): their places are free again
      calls.forEach(c -> c.completeExceptionally(new IllegalStateException("engine call given up")));
      assertError(create(Body.valid().json()), 503, "ENGINE_UNAVAILABLE");
      verify(ORDERS, times(5)).startCreate(any());
      assertEquals(1, RESOURCE.admission().inFlight(), "only the last call holds a place");
    } finally {
      calls.forEach(c -> c.completeExceptionally(new IllegalStateException("the test ended"))); // the shared bound's places
    }
  }

  @Test
  void aRetryWhoseKeysCallIsStillInTheEngineJoinsItAndIsAReplay() {
    acceptCreates(CreateOutcome.CREATED);
    OrderView view = new OrderView(ORDER_ID, TENANT, SUBJECT, "sku-1", 1, 1990, OrderStatus.CREATED, 1, ORDER_ID + "/r1");
    when(ORDERS.createInFlight(any())).thenAnswer(inv -> new Orders.CreateCall("order:wf", inv.getArgument(0),
        java.util.concurrent.CompletableFuture.completedFuture(new CreateResult(CreateOutcome.CREATED, view, List.of(),
            "2026-12-07T04:00:00Z")), false));
    int before = RESOURCE.admission().inFlight();
    Response r = create(Body.valid().json());
    assertEquals(200, r.getStatus(), "the first try made the order: this one reads it");
    JsonNode body = json(r);
    assertEquals("REPLAY", body.get("outcome").asText());
    assertEquals(ORDER_ID, body.get("order_id").asText());
    verify(ORDERS, never()).startCreate(any());
    assertEquals(before, RESOURCE.admission().inFlight(), "a joined retry takes no place under the bound");
  }

  @Test
  void anUnexpectedFailureIs500WithoutItsDetails() {
    acceptCreates(CreateOutcome.CREATED);
    doThrow(new IllegalStateException("pool jdbc:postgresql://db/secret")).when(ORDERS).startCreate(any());
    Response r = create(Body.valid().json());
    JsonNode error = assertError(r, 500, "INTERNAL");
    assertFalse(error.toString().contains("secret"), error.toString());
  }

  // ---------------------------------------------------------------- pay and cancel

  private static Response command(String command, String idempotencyKey) {
    Invocation.Builder b = asCaller("/orders/" + ORDER_ID + "/" + command);
    if (idempotencyKey != null) b = b.header("Idempotency-Key", idempotencyKey);
    return b.post(Entity.json(""));
  }

  @Test
  void payAnswersWhereTheOrderGotOr409WhenRefused() {
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("CREATED"));
    when(ORDERS.pay(WORKFLOW_ID, "pay-1")).thenReturn(new CommandResult(null, OrderStatus.PAID, 3));
    Response paid = command("pay", "pay-1");
    assertEquals(200, paid.getStatus());
    JsonNode body = json(paid);
    assertEquals(Set.of("order_id", "status", "version"), fieldNames(body), body.toString());
    assertEquals("PAID", body.get("status").asText());

    when(ORDERS.pay(WORKFLOW_ID, null)).thenReturn(new CommandResult(CommandOutcome.REJECTED, OrderStatus.CANCELLED, 2));
    Response refused = command("pay", null);
    assertEquals(409, refused.getStatus());
    assertEquals("REJECTED", json(refused).get("outcome").asText());
  }

  @ParameterizedTest
  @EnumSource(value = CommandOutcome.class, names = {"CANCELLED", "REPLAY_CANCEL", "REJECTED"})
  void cancelIs409OnlyWhenRefused(CommandOutcome outcome) {
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("CREATED"));
    when(ORDERS.cancel(WORKFLOW_ID, null)).thenReturn(new CommandResult(outcome, OrderStatus.CANCELLED, 2));
    Response r = command("cancel", null);
    assertEquals(outcome == CommandOutcome.REJECTED ? 409 : 200, r.getStatus());
    assertEquals(outcome.name(), json(r).get("outcome").asText());
  }

  @ParameterizedTest
  @ValueSource(strings = {"pay", "cancel"})
  void aMalformedIdempotencyKeyIs400BeforeTheWorkflow(String command) {
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("CREATED"));
    for (String key : List.of("has space", "k".repeat(65), "semi;colon", "\"\"", "\"k1", "\"k\\\"1\"", "\"has space\"")) {
      assertError(command(command, key), 400, "INVALID_IDEMPOTENCY_KEY");
    }
    verifyNoInteractions(ORDERS);
  }

  /** The IETF draft sends the key as a structured-field string: "k1" and k1 are one key. */
  @Test
  void aQuotedIdempotencyKeyIsTheSameKey() {
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("CREATED"));
    when(ORDERS.pay(WORKFLOW_ID, "pay-1")).thenReturn(new CommandResult(null, OrderStatus.PAID, 3));
    assertEquals(200, command("pay", "\"pay-1\"").getStatus());
    assertEquals(200, command("pay", "pay-1").getStatus());
    verify(ORDERS, times(2)).pay(WORKFLOW_ID, "pay-1");
  }

  private static void workflowGone(String command, String statusNow) {
    when(QUERIES.get(ORDER_ID)).thenReturn(ownOrder("CREATED"), ownOrder(statusNow));
    WorkflowNotFoundException gone = new WorkflowNotFoundException(
        WorkflowExecution.newBuilder().setWorkflowId(WORKFLOW_ID).build(), "OrderWorkflow", null);
    if (command.equals("pay")) when(ORDERS.pay(anyString(), any())).thenThrow(gone);
    else when(ORDERS.cancel(anyString(), any())).thenThrow(gone);
  }

  @Test
  void aFinishedOrderWhoseWorkflowIsGoneIsAnsweredFromItsRow() {
    workflowGone("cancel", "CANCELLED");
    Response replay = command("cancel", null);
    assertEquals(200, replay.getStatus());
    assertEquals("REPLAY_CANCEL", json(replay).get("outcome").asText());

    workflowGone("pay", "CANCELLED");
    Response refused = command("pay", null);
    assertEquals(409, refused.getStatus());
    assertEquals("REJECTED", json(refused).get("outcome").asText());
  }

  @ParameterizedTest
  @ValueSource(strings = {"pay", "cancel"})
  void aMovingOrderWhoseWorkflowIsUnreachableIs503(String command) {
    workflowGone(command, "PAYING");
    Response r = command(command, null);
    assertEquals("1", r.getHeaderString("Retry-After"));
    assertError(r, 503, "ENGINE_UNAVAILABLE");
  }

  // ---------------------------------------------------------------- list and export

  @ParameterizedTest
  @ValueSource(strings = {"0", "101", "1000", "-1", "abc", "1.5", ""})
  void aLimitOutside1To100Is400WithoutAQuery(String limit) {
    assertError(API.target("/orders").queryParam("limit", limit).request()
        .header("Authorization", bearer(TENANT, SUBJECT)).get(), 400, "INVALID_LIMIT");
    verifyNoCollaboratorCalled();
  }

  @Test
  void aCursorThatIsNoOrderIdIs400WithoutAQuery() {
    assertError(API.target("/orders").queryParam("cursor", "' OR 1=1").request()
        .header("Authorization", bearer(TENANT, SUBJECT)).get(), 400, "INVALID_CURSOR");
    verifyNoCollaboratorCalled();
  }

  @Test
  void aPageIsTheCallersOwnAndPointsAtTheNext() {
    List<OrderDetails> three = Stream.of("ord-0001", "ord-0002", "ord-0003")
        .map(id -> order(id, TENANT, SUBJECT, "CREATED")).toList();
    // one more than asked for tells there is a next page
    when(QUERIES.list(TENANT, SUBJECT, null, 3)).thenReturn(three);
    Response r = API.target("/orders").queryParam("limit", "2").request()
        .header("Authorization", bearer(TENANT, SUBJECT)).get();
    assertEquals(200, r.getStatus());
    JsonNode body = json(r);
    List<String> ids = new ArrayList<>();
    for (Iterator<JsonNode> it = body.get("orders").elements(); it.hasNext(); ) ids.add(it.next().get("order_id").asText());
    assertEquals(List.of("ord-0001", "ord-0002"), ids);
    assertEquals("ord-0002", body.get("next_cursor").asText());
  }

  @Test
  void theExportStreamsTheCallersOwnOrders() throws Exception {
    doAnswer(inv -> {
      inv.<OrderQueries.RowSink>getArgument(2).row(ownOrder("PAID"));
      return null;
    }).when(QUERIES).export(eq(TENANT), eq(SUBJECT), any());
    Response r = asCaller("/orders/export.csv").get();
    assertEquals(200, r.getStatus());
    String csv = r.readEntity(String.class);
    assertTrue(csv.startsWith(OrderCsv.HEADER + "\n"), csv);
    assertTrue(csv.contains("\"" + ORDER_ID + "\",\"PAID\""), csv);
    verify(QUERIES).export(eq(TENANT), eq(SUBJECT), any());
  }

  @Test
  void tooManyExportsIs503WithoutAQuery() throws Exception {
    Response r = request(FULL, "/orders/export.csv", bearer(TENANT, SUBJECT)).get();
    assertEquals("5", r.getHeaderString("Retry-After"));
    assertError(r, 503, "EXPORTS_EXHAUSTED");
    verify(QUERIES, never()).export(anyString(), anyString(), any());
  }
}
