package io.flashsale.persistence;

import static io.flashsale.persistence.TestOrders.TENANT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.persistence.Database.DataError;
import io.flashsale.persistence.Database.DatabaseException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How errors a real PostgreSQL raises come out of {@link Database}: what is wrong with the data
 * itself (a unique or check violation, a data exception) is a {@link DataError}, never retried; a
 * dropped connection or a pool with none to give is a transient {@link DatabaseException}.
 */
class DatabaseErrorsOnPostgresTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String ALICE = "alice";
  /** What a connection the server dropped answers: the server's farewell, or the broken socket. */
  private static final Set<String> CONNECTION_LOST = Set.of("57P01", "08006");

  // ---- the data: DataError

  @Test
  void aSecondOrderForTheSameRequestIsAUniqueViolation() {
    OrderRow first = TestOrders.create(pg.db(), "ord-0001", TENANT, ALICE);
    // what a create attempt that outlived its timeout meets once the earlier attempt committed
    OrderRow again = TestOrders.unsaved("ord-0002", TENANT, ALICE, first.requestKey());

    DataError e = assertThrows(DataError.class,
        () -> pg.db().inTx(c -> OrderTransitions.insertCreated(c, again, null, TestOrders.CREATE_CAUSE)));

    // the create retries on exactly this state (the next attempt finds the order), so it must come through
    assertEquals("23505", e.sqlState());
    assertEquals(0, pg.number("SELECT count(*) FROM orders WHERE order_id = ?", again.orderId()));
  }

  @Test
  void aViolatedCheckIsADataError() {
    Skus skus = new Skus(pg.db());

    DataError e = assertThrows(DataError.class, () -> skus.upsert(TENANT, "sku-free", 5, 0L, 1));

    assertEquals("23514", e.sqlState()); // unit_price > 0
  }

  @Test
  void aDataExceptionIsADataError() {
    OrderQueries queries = new OrderQueries(pg.db());

    DataError e = assertThrows(DataError.class, () -> queries.list(TENANT, ALICE, null, -1));

    assertEquals("2201W", e.sqlState()); // LIMIT must not be negative
  }

  // ---- the connection: transient

  @Test
  void aConnectionTheServerDroppedIsTransient() {
    DatabaseException e = assertThrows(DatabaseException.class,
        () -> pg.db().read(c -> selectOneAfterTheServerDropped(c)));

    assertConnectionLost(e);
  }

  /** The rollback fails on the dead connection too; that must not hide the error that ended the work. */
  @Test
  void aConnectionTheServerDroppedMidTransactionIsTransientAndReportedAsSuch() {
    DatabaseException e = assertThrows(DatabaseException.class,
        () -> pg.db().inTx(c -> selectOneAfterTheServerDropped(c)));

    assertConnectionLost(e);
  }

  @Test
  void aPoolWithNoConnectionToGiveIsTransient() {
    try (Database onePool = pg.newDatabase(1, Duration.ofMillis(250))) {
      DatabaseException e = assertThrows(DatabaseException.class,
          () -> onePool.read(holdingTheOnlyConnection -> onePool.read(c -> 1)));

      assertFalse(e instanceof DataError, "SQLState " + e.sqlState());
      assertInstanceOf(SQLTransientConnectionException.class, e.getCause()); // the pool's wait ran out
    }
  }

  private static void assertConnectionLost(DatabaseException e) {
    assertFalse(e instanceof DataError, "SQLState " + e.sqlState());
    assertTrue(CONNECTION_LOST.contains(String.valueOf(e.sqlState())), "SQLState " + e.sqlState() + ": " + e.getMessage());
  }

  /** Has the server end this connection's session, as an operator or a failover would, then uses it. */
  private static int selectOneAfterTheServerDropped(Connection c) throws SQLException {
    int pid = singleInt(c, "SELECT pg_backend_pid()");
    try (Connection outside = pg.outsideConnection()) {
      singleInt(outside, "SELECT CASE WHEN pg_terminate_backend(" + pid + ") THEN 1 ELSE 0 END");
      waitUntilGone(outside, pid);
    }
    return singleInt(c, "SELECT 1");
  }

  private static void waitUntilGone(Connection outside, int pid) throws SQLException {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (singleInt(outside, "SELECT count(*)::int FROM pg_stat_activity WHERE pid = " + pid) > 0) {
      if (System.nanoTime() > deadline) throw new AssertionError("backend " + pid + " still there");
      LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
    }
  }

  private static int singleInt(Connection c, String sql) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
