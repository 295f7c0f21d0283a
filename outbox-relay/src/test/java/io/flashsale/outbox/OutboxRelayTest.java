package io.flashsale.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flashsale.fulfillment.RunningConsumer.Fulfillment;
import io.flashsale.fulfillment.RunningConsumer;
import io.flashsale.outbox.TerminalOrders.OutboxRow;
import io.flashsale.persistence.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The relay on a real PostgreSQL, delivering over HTTP to the real fulfillment consumer: every
 * event a terminal transition wrote arrives; an event is marked published only once the consumer
 * acknowledged it, so a consumer that fails or is down gets it later; relays running side by side
 * claim disjoint rows; and the redelivery a lost commit causes is absorbed by the consumer.
 */
class OutboxRelayTest {
  private static final long POLL_MILLIS = 20;
  private static final long PATIENCE_MILLIS = 10_000;

  private static EmbeddedPostgres postgres;
  private static Database db;
  private static TerminalOrders orders;
  /** One for the class (a stop costs the HTTP server's grace second); the test that stops it starts it again. */
  private static RunningConsumer consumer;

  private final ExecutorService rounds = Executors.newCachedThreadPool();

  @BeforeAll
  static void startPostgres() throws IOException {
    postgres = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start();
    db = new Database(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "postgres", 8);
    db.migrate();
    orders = new TerminalOrders(db);
    consumer = RunningConsumer.start(postgres);
  }

  @AfterAll
  static void stopPostgres() throws IOException {
    if (consumer != null) consumer.close();
    if (db != null) db.close();
    if (postgres != null) postgres.close();
  }

  /** Each test starts from an empty outbox and a healthy consumer that has received nothing. */
  @BeforeEach
  void emptyOutboxAndConsumer() {
    execute("TRUNCATE outbox, order_transition, orders");
    consumer.heal();
    consumer.forgetEverything();
  }

  @AfterEach
  void stopRounds() {
    rounds.shutdownNow();
  }

  // ---- delivery

  @Test
  void everyEventIsDeliveredInOrderAppliedOnceAndMarkedPublished() {
    orders.paid(3);
    orders.failed();
    orders.failed();
    String refunded = orders.cancelledThenRefunded();
    orders.cancelledThenRefunded();
    List<OutboxRow> written = orders.outbox();
    assertEquals(9, written.size(), "fixture: one event per terminal status reached");
    OutboxRelay relay = relay(4);

    relay.drain(); // 4 + 4 + 1: full batches go back to back within one drain

    assertEquals(9, relay.delivered());
    assertEquals(List.of(), orders.unpublished());
    assertEquals(onceEach("APPLIED", written), consumer.effectsByEvent());
    // one relay delivers by event id, so an order's events arrive oldest first
    assertEquals(orders.eventIds(), consumer.arrivals().stream().map(RunningConsumer.Arrival::eventId).toList());
    // what the consumer made of each order shows the body carried the outbox row's order, type and version
    for (OutboxRow last : lastEventOfEachOrder(written)) {
      assertEquals(new Fulfillment(last.orderVersion(), last.eventType(), last.eventType().equals("ORDER_PAID") ? 1 : 0),
          consumer.fulfillment(last.orderId()), last.toString());
    }
    assertEquals(new Fulfillment(4, "ORDER_REFUNDED", 0), consumer.fulfillment(refunded));
  }

  @Test
  void aConsumerAnswering500KeepsEveryEventUnpublishedUntilItRecovers() {
    orders.paid(3);
    OutboxRelay relay = relay(10);
    consumer.failEveryEvent();

    assertEquals(0, relay.relayOnce());
    assertEquals(0, relay.relayOnce(), "a retry while it still fails marks nothing either");

    assertEquals(orders.eventIds(), orders.unpublished());
    assertEquals(Map.of(), consumer.effectsByEvent());

    consumer.heal();
    assertEquals(3, relay.relayOnce());

    assertEquals(List.of(), orders.unpublished());
    assertEquals(onceEach("APPLIED", orders.outbox()), consumer.effectsByEvent());
  }

  @Test
  void aFailedEventDoesNotHoldUpTheOnesAfterItAndItsLateArrivalIsStale() {
    String order = orders.cancelledThenRefunded();
    List<Long> events = orders.eventIds(); // ORDER_CANCELLED v2, ORDER_REFUNDED v4
    long cancelled = events.get(0);
    long refunded = events.get(1);
    OutboxRelay relay = relay(10);
    consumer.failEvents(cancelled);

    assertEquals(1, relay.relayOnce());
    assertEquals(List.of(cancelled), orders.unpublished());

    consumer.heal();
    assertEquals(1, relay.relayOnce());

    assertEquals(List.of(), orders.unpublished());
    // the consumer's version guard absorbs the reordering: v2 after v4 changes nothing
    assertEquals(Map.of(refunded, List.of("APPLIED"), cancelled, List.of("STALE")), consumer.effectsByEvent());
    assertEquals(new Fulfillment(4, "ORDER_REFUNDED", 0), consumer.fulfillment(order));
  }

  @Test
  void aRunningRelayDeliversEverythingOnceAConsumerThatWasDownIsBack() throws IOException {
    orders.paid(3);
    orders.cancelledThenRefunded();
    OutboxRelay relay = relay(2);
    int port = consumer.port();

    consumer.stop();
    try {
      assertEquals(0, relay.relayOnce(), "nothing is acknowledged while the consumer is down");
      assertEquals(orders.eventIds(), orders.unpublished());
      relay.start(); // its rounds fail until the consumer is back
    } finally {
      consumer.close();
      consumer = RunningConsumer.startOn(postgres, port);
    }
    try {
      await(() -> orders.unpublished().isEmpty(), "every event published once the consumer is back");
    } finally {
      stop(relay);
    }
    assertEquals(onceEach("APPLIED", orders.outbox()), consumer.effectsByEvent());
  }

  // ---- relays side by side

  @Test
  void twoRelaysAtOnceClaimDisjointEventsThatTogetherAreAll() throws Exception {
    orders.paid(10);
    OutboxRelay first = relay(4);
    OutboxRelay second = relay(20);
    Future<Integer> firstRound;
    Future<Integer> secondRound;

    try (MarksHeld held = holdMarks()) {
      firstRound = rounds.submit(first::relayOnce);
      await(() -> relaysWaitingToMark().size() == 1, "the first relay delivered its batch and waits to mark it");
      // the first relay still holds its 4 rows: the second one must pass them by, not wait for them
      secondRound = rounds.submit(second::relayOnce);
      await(() -> relaysWaitingToMark().size() == 2, "the second relay delivered the rest and waits to mark it");

      // both claims are in, neither committed: each event was delivered by exactly one of them
      assertEquals(onceEach("APPLIED", orders.outbox()), consumer.effectsByEvent());
    }

    assertEquals(4, firstRound.get());
    assertEquals(6, secondRound.get());
    assertEquals(List.of(), orders.unpublished());
  }

  @Test
  void anEventRedeliveredAfterALostCommitIsADuplicateAndShipsOnce() throws Exception {
    List<String> paid = orders.paid(3);
    OutboxRelay crashing = relay(10);
    OutboxRelay survivor = relay(10);

    try (MarksHeld held = holdMarks()) {
      Future<Integer> lostRound = rounds.submit(crashing::relayOnce);
      await(() -> relaysWaitingToMark().size() == 1, "the relay delivered its batch and waits to mark it");
      // the relay dies between the consumer's 200s and its commit
      for (int pid : relaysWaitingToMark()) execute("SELECT pg_terminate_backend(" + pid + ")");

      ExecutionException lost = assertThrows(ExecutionException.class, lostRound::get);
      assertInstanceOf(Database.DatabaseException.class, lost.getCause());
    }
    assertEquals(orders.eventIds(), orders.unpublished(), "the marks died with the relay's transaction");

    assertEquals(3, survivor.relayOnce());

    assertEquals(List.of(), orders.unpublished());
    assertEquals(onceEach(List.of("APPLIED", "DUPLICATE"), orders.outbox()), consumer.effectsByEvent());
    for (String order : paid) assertEquals(1, consumer.fulfillment(order).shipCount(), order);
  }

  @Test
  void relaysDrainingTogetherDeliverEachEventExactlyOnce() throws Exception {
    orders.paid(40);
    OutboxRelay one = relay(5);
    OutboxRelay two = relay(5);

    List<Future<?>> drains = List.of(rounds.submit(one::drain), rounds.submit(two::drain));
    for (Future<?> drain : drains) drain.get();

    // how the 40 split between the two depends on scheduling
    System.out.printf("relays draining together: one delivered %d, two delivered %d%n", one.delivered(), two.delivered());
    assertEquals(40, one.delivered() + two.delivered());
    assertEquals(List.of(), orders.unpublished());
    assertEquals(onceEach("APPLIED", orders.outbox()), consumer.effectsByEvent());
  }

  @Test
  void aRelayNeedsABatchOfAtLeastOneEvent() {
    // with a batch of 0 every round marks 0 = a full batch, and drain() would never return
    assertThrows(IllegalArgumentException.class, () -> relay(0));
  }

  // ---- relays and what they did

  private OutboxRelay relay(int batchSize) {
    return new OutboxRelay(db, consumer.url(), RunningConsumer.DELIVERY_SECRET, batchSize, POLL_MILLIS, "test");
  }

  private static void stop(OutboxRelay relay) {
    try {
      relay.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Each written event with these effects at the consumer, keyed by event id. */
  private static Map<Long, List<String>> onceEach(List<String> effects, List<OutboxRow> written) {
    Map<Long, List<String>> expected = new TreeMap<>();
    for (OutboxRow row : written) expected.put(row.eventId(), effects);
    return expected;
  }

  private static Map<Long, List<String>> onceEach(String effect, List<OutboxRow> written) {
    return onceEach(List.of(effect), written);
  }

  private static List<OutboxRow> lastEventOfEachOrder(List<OutboxRow> written) {
    return new ArrayList<>(written.stream()
        .collect(Collectors.toMap(OutboxRow::orderId, r -> r, (a, b) -> b.eventId() > a.eventId() ? b : a))
        .values());
  }

  // ---- holding the marks: a SHARE lock on outbox lets relays claim rows (FOR UPDATE) but not mark them

  private record MarksHeld(Connection c) implements AutoCloseable {
    @Override
    public void close() throws SQLException {
      try (c) {
        c.commit();
      }
    }
  }

  private static MarksHeld holdMarks() throws SQLException {
    Connection c = db.dataSource().getConnection();
    c.setAutoCommit(false);
    try (Statement s = c.createStatement()) {
      s.execute("LOCK TABLE outbox IN SHARE MODE");
    }
    return new MarksHeld(c);
  }

  /** Backend pids of relays that delivered a batch and wait for the lock to mark it. */
  private static List<Integer> relaysWaitingToMark() {
    return db.read(c -> {
      List<Integer> pids = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT pid FROM pg_stat_activity"
          + " WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE outbox SET published_at%'");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) pids.add(rs.getInt(1));
      }
      return pids;
    });
  }

  private static void execute(String sql) {
    db.read(c -> {
      try (Statement s = c.createStatement()) {
        return s.execute(sql);
      }
    });
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.currentTimeMillis() + PATIENCE_MILLIS;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) throw new AssertionError("timed out waiting: " + what);
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting: " + what);
      }
    }
  }
}
