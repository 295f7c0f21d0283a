package io.flashsale.persistence;

import static io.flashsale.persistence.TestOrders.TENANT;
import static io.flashsale.domain.OrderStatus.PAID;
import static io.flashsale.domain.OrderStatus.PAYING;
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
 * The read side on a real PostgreSQL: a subject's orders page in creation order (the sequence
 * number each id was issued from), though ids are a permutation of it in no order, across orders
 * from before the permutation (ord-9998, ord-10000: text order would put ord-10000 first) and
 * after it, each page starting right after the cursor; a cursor that is none of the caller's
 * orders stands where its number does, another's order no different from a missing one; nobody
 * sees another's orders; one order comes with its timeline.
 */
class OrderQueriesTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String ALICE = "alice";
  private static final String BOB = "bob";
  private static final String OTHER_TENANT = "t2";
  private static OrderQueries queries;

  /**
   * Alice's orders with Bob's before, between and after hers, and an Alice of another tenant: the
   * listing tests only read these. The first three have ids of the old form (ord-%04d of their
   * number), the rest ids of the new one, which run against creation order.
   */
  @BeforeAll
  static void ordersOfSeveralOwnersBeforeAndAfterThePermutation() {
    queries = new OrderQueries(pg.db());
    create("ord-9997", 9_997, TENANT, BOB);
    create("ord-9998", 9_998, TENANT, ALICE);
    create("ord-10000", 10_000, TENANT, ALICE);
    create("ord-000000700000", 10_001, TENANT, ALICE);
    create("ord-000000300000", 10_002, TENANT, BOB);
    create("ord-000000200000", 10_003, TENANT, ALICE);
    create("ord-000000900000", 10_004, OTHER_TENANT, ALICE);
    create("ord-000000100000", 10_005, TENANT, ALICE);
  }

  // ---- list

  @Test
  void ownOrdersListInCreationOrderWhateverTheirIds() {
    assertEquals(ids("ord-9998", "ord-10000", "ord-000000700000", "ord-000000200000", "ord-000000100000"),
        page(TENANT, ALICE, null, 10));
  }

  @Test
  void eachPageStartsRightAfterTheCursorWhereThePreviousOneEnded() {
    assertEquals(ids("ord-9998", "ord-10000"), page(TENANT, ALICE, null, 2));
    assertEquals(ids("ord-000000700000", "ord-000000200000"), page(TENANT, ALICE, "ord-10000", 2));
    assertEquals(ids("ord-000000100000"), page(TENANT, ALICE, "ord-000000200000", 2));
    assertEquals(ids(), page(TENANT, ALICE, "ord-000000100000", 2));
  }

  @Test
  void aCursorThatIsNoneOfTheCallersOrdersStandsWhereItsNumberDoes() {
    assertEquals(page(TENANT, ALICE, null, 10), page(TENANT, ALICE, "ord-0000", 10), "ord-0000: from the start");
    assertEquals(ids("ord-10000", "ord-000000700000"), page(TENANT, ALICE, "ord-9999", 2), "a missing old-form id");
    assertEquals(ids(), page(TENANT, ALICE, "ord-000000150000", 2), "a missing id past every number");
    assertEquals(ids(), page(TENANT, ALICE, "ord-000000300000", 2),
        "Bob's order (number 10 002) is a missing id to Alice: its digits, not its place, decide");
    assertEquals(ids(), page(TENANT, ALICE, "ord-x", 2), "another form: past every order");
  }

  @Test
  void theExportIsInCreationOrderToo() throws Exception {
    List<String> exported = new java.util.ArrayList<>();
    queries.export(TENANT, ALICE, order -> exported.add(order.orderId()));
    assertEquals(page(TENANT, ALICE, null, 10), exported);
  }

  @Test
  void aSubjectSeesOnlyItsOwnOrders() {
    assertEquals(ids("ord-9997", "ord-000000300000"), page(TENANT, BOB, null, 10));
    assertEquals(ids("ord-000000900000"), page(OTHER_TENANT, ALICE, null, 10),
        "the same name in another tenant is someone else");
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

  private static void create(String orderId, long seq, String tenant, String subject) {
    TestOrders.create(pg.db(), orderId, seq, tenant, subject);
  }

  /** CREATED, then PAYING, then PAID; of a subject the listing tests do not read. */
  private static String paidOrder(String orderId) {
    TestOrders.create(pg.db(), orderId, TENANT, "dave");
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
