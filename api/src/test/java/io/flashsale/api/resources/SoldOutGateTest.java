package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
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
import io.dropwizard.testing.junit5.ResourceExtension;
import io.flashsale.api.auth.Caller;
import io.flashsale.api.auth.JsonUnauthorizedHandler;
import io.flashsale.api.auth.SessionAuthFilter;
import io.flashsale.api.auth.TokenAuthenticator;
import io.flashsale.api.auth.TokenService;
import io.flashsale.api.core.BodyLimit;
import io.flashsale.api.core.ErrorMappers;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.Inventory;
import io.flashsale.persistence.MigratedPostgres;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.OrderRow;
import io.flashsale.persistence.OrderTransitions;
import io.flashsale.persistence.PrincipalView;
import io.flashsale.persistence.Principals;
import io.flashsale.persistence.Skus;
import io.flashsale.persistence.Stock;
import io.flashsale.persistence.StockView;
import io.flashsale.workflows.Orders;
import io.flashsale.workflows.WorkflowIds;
import jakarta.ws.rs.client.Entity;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.mockito.Answers;
import org.mockito.MockMakers;

/**
 * POST /orders' sold-out gate with the stock view, on a real PostgreSQL: a SKU the view knows as
 * sold out is refused 409 SOLD_OUT without a stock read and without the engine; a retry of a key
 * that has an order still gets that order; an unknown SKU, an available one and any SKU while the
 * view is stale go through the stock read as before. With the caller view too, a buyer without
 * any order is refused without a single database read (no revocation read, no key read), and a
 * buyer with an order under another SKU still gets 422 KEY_REUSED. The SKUs, queries and database
 * are the real ones (spied, to count their calls); only the workflow client is a mock.
 */
class SoldOutGateTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String TENANT = "t1";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TokenService TOKENS = new TokenService("sold-out-gate-test-secret", 300, Clock.systemUTC());
  private static final AtomicInteger NEXT_ID = new AtomicInteger();

  private static Skus skus;
  private static OrderQueries queries;
  private static Orders orders;
  private static StockView view;
  private static OrderResource resource;
  private static ResourceExtension api;
  /** A view that never started: every answer STALE, as when its connection is gone past the bound. */
  private static StockView staleView;
  private static OrderResource staleResource;
  private static ResourceExtension staleApi;
  /** The stock view and the caller view, with the principals' reads counted. */
  private static PrincipalView principalView;
  private static Database principalsDb;
  private static OrderResource memoryResource;
  private static ResourceExtension memoryApi;

  private final String subject = "buyer-" + NEXT_ID.incrementAndGet();

  @BeforeAll
  static void startApi() throws Throwable {
    // after the database (the extension's beforeAll runs first); the Jersey side is started here for that
    skus = spyOn(new Skus(pg.db()), Skus.class);
    queries = spyOn(new OrderQueries(pg.db()), OrderQueries.class);
    orders = mock(Orders.class, withSettings().mockMaker(MockMakers.INLINE));
    Principals principals = new Principals(pg.db());
    view = StockView.on(pg.db(), Duration.ofMillis(500), Duration.ofMillis(2_000));
    view.start();
    resource = new OrderResource(orders, queries, skus, view, 4, 1);
    api = api(resource, principals);
    api.before();
    staleView = StockView.on(pg.db(), Duration.ofMillis(500), Duration.ofMillis(2_000));
    staleResource = new OrderResource(orders, queries, skus, staleView, 4, 1);
    staleApi = api(staleResource, principals);
    staleApi.before();
    principalView = PrincipalView.on(pg.db(), Duration.ofMillis(50), Duration.ofMillis(2_000));
    principalView.start();
    principalsDb = spyOn(pg.db(), Database.class);
    memoryResource = new OrderResource(orders, queries, skus, view, principalView, CreateAdmission.fixed(4), 1);
    memoryApi = api(memoryResource, new Principals(principalsDb, principalView));
    memoryApi.before();
  }

  @AfterAll
  static void stopApi() throws Throwable {
    if (api != null) api.after();
    if (staleApi != null) staleApi.after();
    if (memoryApi != null) memoryApi.after();
    if (principalView != null) principalView.close();
    if (view != null) view.close();
    if (staleView != null) staleView.close();
  }

  @BeforeEach
  void forgetEarlierCalls() {
    reset(skus, queries, orders, principalsDb);
  }

  private static <T> T spyOn(T real, Class<T> type) {
    return mock(type, withSettings().spiedInstance(real).defaultAnswer(Answers.CALLS_REAL_METHODS)
        .mockMaker(MockMakers.INLINE));
  }

  private static ResourceExtension api(OrderResource r, Principals principals) {
    return ResourceExtension.builder()
        .setRegisterDefaultExceptionMappers(false)
        .addProvider(new AuthDynamicFeature(new SessionAuthFilter.Builder(TOKENS)
            .setAuthenticator(new TokenAuthenticator(TOKENS, principals))
            .setPrefix("Bearer")
            .setUnauthorizedHandler(new JsonUnauthorizedHandler())
            .buildAuthFilter()))
        .addProvider(new AuthValueFactoryProvider.Binder<>(Caller.class))
        .addProvider(new BodyLimit(64 * 1024))
        .addProvider(new ErrorMappers.MalformedJson())
        .addProvider(new ErrorMappers.WebErrors())
        .addProvider(new ErrorMappers.Unexpected())
        .addResource(r)
        .build();
  }

  // ---------------------------------------------------------------- from the view

  @Test
  void aSoldOutSkuIs409FromTheViewWithoutAStockReadOrTheEngine() {
    String sku = newSku(1);
    reserveLastUnit(sku, "someone-else");
    awaitSoldOut(sku);
    long before = resource.gateFromView().getCount();

    Response r = create(api, "k1", sku);
    assertEquals(409, r.getStatus());
    assertEquals("{\"outcome\":\"SOLD_OUT\"}", r.readEntity(String.class), "the body the stock read's gate answers");
    verify(skus, never()).remaining(anyString(), anyString());
    verify(queries).keyedOrder(TENANT, subject, "k1");
    verifyNoInteractions(orders);
    assertEquals(before + 1, resource.gateFromView().getCount());

    // a crowd: every one answered from the view, none reads the stock
    for (int i = 0; i < 100; i++) assertEquals(409, create(api, "crowd-" + i, sku).getStatus());
    verify(skus, never()).remaining(anyString(), anyString());
    verifyNoInteractions(orders);
  }

  @Test
  void aRetryOfAKeyThatHasAnOrderGetsItsOrderNotSoldOut() {
    String sku = newSku(1);
    String orderId = takeLastUnitWithAnOrder(sku, "k1");
    awaitSoldOut(sku);

    Response r = create(api, "k1", sku);
    String body = r.readEntity(String.class);
    assertEquals(200, r.getStatus(), body);
    JsonNode answer = parse(body);
    assertEquals("REPLAY", answer.get("outcome").asText());
    assertEquals(orderId, answer.get("order_id").asText());
    // answered from the order's row: the engine is not asked
    verifyNoInteractions(orders);
    verify(skus, never()).remaining(anyString(), anyString());

    // another key of the same buyer is no retry: sold out
    assertEquals(409, create(api, "k2", sku).getStatus());
    verifyNoInteractions(orders);
  }

  // ---------------------------------------------------------------- from the view and the caller view

  @Test
  void aBuyerWithoutAnyOrderIsSoldOutWithoutASingleDatabaseRead() {
    String sku = newSku(1);
    reserveLastUnit(sku, "someone-else");
    awaitSoldOut(sku);
    awaitCallerViewAfter(sku);
    reset(skus, queries, orders, principalsDb);
    long before = memoryResource.gateFromView().getCount();
    long keyReads = memoryResource.keyFromDatabase().getCount();

    for (int i = 0; i < 50; i++) {
      Response r = create(memoryApi, "crowd-" + i, sku);
      assertEquals(409, r.getStatus());
      assertEquals("{\"outcome\":\"SOLD_OUT\"}", r.readEntity(String.class));
    }
    verify(principalsDb, never()).read(any());
    verify(queries, never()).keyedOrder(anyString(), anyString(), anyString());
    verify(skus, never()).remaining(anyString(), anyString());
    verifyNoInteractions(orders);
    assertEquals(before + 50, memoryResource.gateFromView().getCount());
    assertEquals(keyReads, memoryResource.keyFromDatabase().getCount());
  }

  @Test
  void withTheCallerViewAKeyWithAnOrderGetsItsOrderOrKeyReusedNotSoldOut() {
    String sku = newSku(1);
    String orderId = takeLastUnitWithAnOrder(sku, "k1");
    String otherSku = newSku(0);
    awaitSoldOut(sku);
    awaitSoldOut(otherSku);
    awaitCallerViewAfter(sku);
    awaitCallerViewAfter(otherSku);

    Response replay = create(memoryApi, "k1", sku);
    String body = replay.readEntity(String.class);
    assertEquals(200, replay.getStatus(), body);
    assertEquals(orderId, parse(body).get("order_id").asText());
    // the same key with another SKU: the key's order decides, as the contract says, before sold out
    Response reused = create(memoryApi, "k1", otherSku);
    assertEquals(422, reused.getStatus());
    assertEquals("{\"outcome\":\"KEY_REUSED\"}", reused.readEntity(String.class));
    verify(queries, times(2)).keyedOrder(TENANT, subject, "k1");
    verifyNoInteractions(orders);
  }

  @Test
  void aRevokedBuyerIsRefusedFromTheCallerViewAtOnce() {
    String sku = newSku(0);
    awaitSoldOut(sku);
    new Principals(pg.db(), principalView).revoke(TENANT, subject);
    Response r = create(memoryApi, "k1", sku);
    assertEquals(403, r.getStatus());
    assertTrue(r.readEntity(String.class).contains("REVOKED"));
    verify(principalsDb, never()).read(any());
  }

  // ---------------------------------------------------------------- through the stock read

  @Test
  void anUnknownSkuIs404FromTheStockRead() {
    awaitFresh();
    Response r = create(api, "k1", "no-such-sku");
    assertEquals(404, r.getStatus());
    assertEquals("{\"outcome\":\"UNKNOWN_SKU\"}", r.readEntity(String.class));
    verify(skus).remaining(TENANT, "no-such-sku");
    verifyNoInteractions(orders);
  }

  @Test
  void anAvailableSkuReadsTheStockAndGoesToTheEngineAsBefore() {
    String sku = newSku(5);
    awaitAnswer(sku, StockView.Answer.AVAILABLE);
    long before = resource.gateFromDatabase().getCount();
    when(orders.startCreate(any())).thenAnswer(inv -> new Orders.CreateCall("order:wf", inv.getArgument(0),
        java.util.concurrent.CompletableFuture.completedFuture(new CreateResult(CreateOutcome.USER_LIMIT, null, List.of(), null)),
        true));
    when(orders.await(any())).thenAnswer(inv -> ((Orders.CreateCall) inv.getArgument(0)).answer().join());

    Response r = create(api, "k1", sku);
    assertEquals(409, r.getStatus());
    assertEquals("{\"outcome\":\"USER_LIMIT\"}", r.readEntity(String.class));
    verify(skus).remaining(TENANT, sku);
    verify(orders).startCreate(new CreateOrder(TENANT, subject, "k1", sku, 1, null));
    assertEquals(before + 1, resource.gateFromDatabase().getCount());
  }

  @Test
  void whileTheViewIsStaleASoldOutSkuIsRefusedFromTheStockRead() {
    String sku = newSku(0);
    awaitSoldOut(sku); // the started view knows; the stale one cannot say
    assertEquals(StockView.Answer.STALE, staleView.answer(TENANT, sku));

    Response r = create(staleApi, "k1", sku);
    assertEquals(409, r.getStatus());
    assertEquals("{\"outcome\":\"SOLD_OUT\"}", r.readEntity(String.class));
    verify(skus).remaining(TENANT, sku);
    verify(queries).keyedOrder(TENANT, subject, "k1");
    verifyNoInteractions(orders);
    assertEquals(0, staleResource.gateFromView().getCount());
  }

  // ---------------------------------------------------------------- overloaded

  @Test
  void overloadedOnAnAvailableSkuIs503BeforeAnyReadAndAnUnknownSkuStill404() throws Throwable {
    // an admission without room: every create past the gates is refused
    ResourceExtension fullApi = api(new OrderResource(orders, queries, skus, view, principalView,
        CreateAdmission.fixed(0), 1), new Principals(principalsDb, principalView));
    fullApi.before();
    try {
      String sku = newSku(5);
      awaitAnswer(sku, StockView.Answer.AVAILABLE);
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (!principalView.hasNoOrder(TENANT, subject, System.nanoTime() - Duration.ofSeconds(2).toNanos())) {
        if (System.nanoTime() > deadline) fail("the caller view never polled");
        sleep();
      }
      reset(principalsDb);
      // a crowd's retries: refused at once, no stock read, no key read, no engine
      for (int i = 0; i < 20; i++) {
        Response r = create(fullApi, "k1", sku);
        assertEquals(503, r.getStatus());
        assertEquals("1", r.getHeaderString("Retry-After"));
        assertEquals("OVERLOADED", parse(r.readEntity(String.class)).get("outcome").asText());
      }
      verify(skus, never()).remaining(anyString(), anyString());
      verify(queries, never()).keyedOrder(anyString(), anyString(), anyString());
      verifyNoInteractions(orders, principalsDb);

      // a buyer who may have an order (this process saw one, or a create of theirs got no answer)
      // reads the key first: a retry of an ordered key is answered with its order, never refused blind
      principalView.noteOrdered(TENANT, subject);
      assertEquals(503, create(fullApi, "k9", sku).getStatus(), "no order under k9: still overloaded");
      verify(queries).keyedOrder(TENANT, subject, "k9");

      // what the view does not know as on sale goes through the stock read as before
      Response unknown = create(fullApi, "k2", "no-such-sku");
      assertEquals(404, unknown.getStatus());
      verify(skus).remaining(TENANT, "no-such-sku");
    } finally {
      fullApi.after();
    }
  }

  // ---------------------------------------------------------------- helpers

  private Response create(ResourceExtension target, String requestKey, String sku) {
    return target.target("/orders").request()
        .header("Authorization", "Bearer " + TOKENS.issue(TENANT, subject))
        .post(Entity.entity("{\"request_key\":\"" + requestKey + "\",\"sku\":\"" + sku + "\",\"quantity\":1}",
            MediaType.APPLICATION_JSON_TYPE));
  }

  private static String newSku(int total) {
    String sku = "gate-" + NEXT_ID.incrementAndGet();
    assertEquals(Skus.Upsert.CREATED, new Skus(pg.db()).upsert(TENANT, sku, total, 1990L, 3).outcome());
    return sku;
  }

  private static void reserveLastUnit(String sku, String buyer) {
    String key = "gate-res-" + NEXT_ID.incrementAndGet();
    assertEquals(Inventory.Take.HELD, pg.db().inTx(c -> Inventory.reserve(c, key, TENANT, sku, buyer, 1, 3,
        Duration.ofMinutes(10))));
  }

  /** The first call with the key took the last unit and made the order (what the workflow's reserve commits). */
  private String takeLastUnitWithAnOrder(String sku, String requestKey) {
    String orderId = "ord-gate-" + NEXT_ID.incrementAndGet();
    String workflowId = WorkflowIds.forScope(TENANT, subject, requestKey);
    pg.db().inTx(c -> {
      assertEquals(Inventory.Take.HELD, Inventory.reserve(c, Inventory.firstReservationKey(orderId), TENANT, sku, subject,
          1, 3, Duration.ofMinutes(10)));
      return OrderTransitions.insertCreated(c, new OrderRow(orderId, TENANT, subject, requestKey,
          new CreateOrder(TENANT, subject, requestKey, sku, 1, null).payload(), sku, 1, 1990, OrderStatus.CREATED, 1,
          Inventory.firstReservationKey(orderId), 1, workflowId), null, "create");
    });
    assertEquals(new Stock(1, 0, 1, 0), pg.db().read(c -> Stock.of(c, TENANT, sku)));
    return orderId;
  }

  /** Until a poll of the caller view started after the view learned the SKU sold out. */
  private static void awaitCallerViewAfter(String sku) {
    long seen = view.soldOutSeenAt(TENANT, sku);
    assertTrue(seen != StockView.NOT_SOLD_OUT, "the SKU is sold out in the view");
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!principalView.hasNoOrder(TENANT, "nobody", seen)) {
      if (System.nanoTime() > deadline) fail("no poll of the caller view after the sold-out within 5 s");
      sleep();
    }
  }

  private static void awaitSoldOut(String sku) {
    awaitAnswer(sku, StockView.Answer.SOLD_OUT);
  }

  private static void awaitFresh() {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (!view.fresh()) {
      if (System.nanoTime() - deadline > 0) fail("the view never read the stock: " + view.describe());
      sleep();
    }
  }

  private static void awaitAnswer(String sku, StockView.Answer want) {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (view.answer(TENANT, sku) != want) {
      if (System.nanoTime() - deadline > 0) fail(sku + ": the view answers " + view.answer(TENANT, sku) + ", not " + want);
      sleep();
    }
    assertTrue(view.fresh() || want == StockView.Answer.STALE);
  }

  private static void sleep() {
    try {
      Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static JsonNode parse(String body) {
    try {
      return JSON.readTree(body);
    } catch (java.io.IOException e) {
      throw new AssertionError("not JSON: " + body, e);
    }
  }
}
