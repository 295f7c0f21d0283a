package io.flashsale.persistence;

import static io.flashsale.persistence.TestOrders.TENANT;
import static io.flashsale.workflows.OrderStatus.PAID;
import static io.flashsale.workflows.OrderStatus.PAYING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.flashsale.persistence.OrderQueries.OrderDetails;
import io.flashsale.persistence.OrderQueries.TimelineEntry;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The read side on a real PostgreSQL: a subject's orders page in creation order, also where ids
 * grow a fifth digit (text order would put ord-10000 before ord-9998), each page starting right
 * after the cursor; nobody sees another's orders; one order comes with its timeline.
 */
class OrderQueriesTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String ALICE = "alice";
  private static final String BOB = "bob";
  private static final String OTHER_TENANT = "t2";
  private static OrderQueries queries;

  /**
   * Alice's orders with Bob's before, between and after hers, and an Alice of another tenant: the
   * listing tests only read these.
   */
  @BeforeAll
  static void ordersOfSeveralOwnersAcrossOrd9999() {
    queries = new OrderQueries(pg.db());
    create("ord-9997", TENANT, BOB);
    create("ord-9998", TENANT, ALICE);
    create("ord-9999", TENANT, ALICE);
    create("ord-10000", TENANT, ALICE);
    create("ord-10001", TENANT, ALICE);
    create("ord-10002", TENANT, BOB);
    create("ord-10003", TENANT, ALICE);
    create("ord-10004", OTHER_TENANT, ALICE);
  }

  // ---- list

  @Test
  void ownOrdersListInCreationOrderPastOrd9999() {
    assertEquals(ids("ord-9998", "ord-9999", "ord-10000", "ord-10001", "ord-10003"), page(TENANT, ALICE, null, 10));
  }

  @Test
  void eachPageStartsRightAfterTheCursorWhereThePreviousOneEnded() {
    assertEquals(ids("ord-9998", "ord-9999"), page(TENANT, ALICE, null, 2));
    assertEquals(ids("ord-10000", "ord-10001"), page(TENANT, ALICE, "ord-9999", 2));
    assertEquals(ids("ord-10003"), page(TENANT, ALICE, "ord-10001", 2));
    assertEquals(ids(), page(TENANT, ALICE, "ord-10003", 2));
  }

  @Test
  void aSubjectSeesOnlyItsOwnOrders() {
    assertEquals(ids("ord-9997", "ord-10002"), page(TENANT, BOB, null, 10));
    assertEquals(ids("ord-10004"), page(OTHER_TENANT, ALICE, null, 10), "the same name in another tenant is someone else");
    assertEquals(ids(), page(TENANT, "carol", null, 10));
    for (OrderDetails order : queries.list(TENANT, ALICE, null, 10)) {
      assertEquals(List.of(TENANT, ALICE), List.of(order.tenant(), order.subject()), order.orderId());
    }
  }

  // ---- get

  @Test
  void anOrderComesWithItsTimelineInVersionOrderStartingFromNothing() {
    String orderId = paidOrder("ord-20001");

    OrderDetails order = queries.get(orderId);

    assertEquals(PAID, order.status());
    assertEquals(3, order.version());
    assertEquals(List.of("-> CREATED v1 create", "CREATED -> PAYING v2 pay", "PAYING -> PAID v3 charged"),
        order.timeline().stream().map(OrderQueriesTest::describe).toList());
    assertNull(order.timeline().get(0).fromStatus());
  }

  @Test
  void theFeedResumesAfterTheLastVersionSeen() {
    String orderId = paidOrder("ord-20002");

    assertEquals(List.of(2, 3), queries.transitionsAfter(orderId, 1).stream().map(TimelineEntry::version).toList());
    assertEquals(List.of(), queries.transitionsAfter(orderId, 3));
  }

  @Test
  void anUnknownOrderIsNull() {
    assertNull(queries.get("ord-0000"));
  }

  // ---- helpers

  private static void create(String orderId, String tenant, String subject) {
    TestOrders.create(pg.db(), orderId, tenant, subject);
  }

  /** CREATED, then PAYING, then PAID; of a subject the listing tests do not read. */
  private static String paidOrder(String orderId) {
    create(orderId, TENANT, "dave");
    pg.db().inTx(c -> {
      OrderTx tx = new OrderTx(c, orderId);
      tx.move(PAYING, "pay");
      tx.move(PAID, "charged");
      return null;
    });
    return orderId;
  }

  private static List<String> page(String tenant, String subject, String afterOrderId, int limit) {
    return queries.list(tenant, subject, afterOrderId, limit).stream().map(OrderDetails::orderId).toList();
  }

  private static List<String> ids(String... orderIds) {
    return Arrays.asList(orderIds);
  }

  private static String describe(TimelineEntry entry) {
    String from = entry.fromStatus() == null ? "" : entry.fromStatus() + " ";
    return from + "-> " + entry.toStatus() + " v" + entry.version() + " " + entry.cause();
  }
}
