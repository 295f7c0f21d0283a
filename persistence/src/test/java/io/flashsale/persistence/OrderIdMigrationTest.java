package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * V8 on a database with orders of the old ids (ord-%04d of the sequence): they keep their ids,
 * their number becomes their seq, a row of another form gets one after them, the sequence goes
 * on past all of them, and the buyer's list keeps creation order across old and new ids.
 */
class OrderIdMigrationTest {

  @Test
  void ordersOfTheOldIdsKeepThemAndTheirPlace() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start()) {
      String url = pg.getJdbcUrl("postgres", "postgres");
      Flyway.configure().dataSource(url, "postgres", "postgres").locations("classpath:db/migration").target("5")
          .load().migrate();
      try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
        st.execute("SELECT setval('order_number', 10000)"); // as the service left it after ord-10000
        for (String id : List.of("ord-9999", "ord-0007", "ord-10000", "ord-20000", "ord-hand-1")) {
          st.execute("INSERT INTO orders (order_id, tenant, subject, request_key, payload, sku, quantity, amount,"
              + " status, version, reservation_key, workflow_id) VALUES ('" + id + "', 't1', 'u1', 'k-" + id
              + "', '{}', 'sku-1', 1, 1990, 'CREATED', 1, '" + id + "/r1', 'wf-" + id + "')");
        }
      }

      try (Database db = new Database(url, "postgres", "postgres", 2, Duration.ofSeconds(10))) {
        db.migrate();
        // ord-20000 was written by hand ahead of the sequence: no later number repeats it
        assertEquals(List.of("ord-0007:7", "ord-9999:9999", "ord-10000:10000", "ord-20000:20000", "ord-hand-1:20001"),
            db.read(c -> strings(c, "SELECT order_id || ':' || seq FROM orders ORDER BY seq")));

        OrderIdIssuer.Issued next = db.inTx(new OrderIdIssuer()::next);
        assertEquals(20_002, next.seq(), "the sequence goes on after every existing order");
        assertTrue(next.orderId().matches("ord-[0-9]{12}"), next.orderId());
        OrderRow row = TestOrders.unsaved(next.orderId(), "t1", "u1", "k-new");
        db.inTx(c -> OrderTransitions.insertCreated(c, row, next.seq(), null, TestOrders.CREATE_CAUSE));

        OrderQueries queries = new OrderQueries(db);
        List<String> listed = queries.list("t1", "u1", null, 10).stream().map(OrderQueries.OrderDetails::orderId).toList();
        assertEquals(List.of("ord-0007", "ord-9999", "ord-10000", "ord-20000", "ord-hand-1", next.orderId()), listed);
        assertEquals(List.of("ord-hand-1", next.orderId()),
            queries.list("t1", "u1", "ord-20000", 10).stream().map(OrderQueries.OrderDetails::orderId).toList());
        assertEquals(List.of("orders_by_owner:CREATE UNIQUE INDEX orders_by_owner ON public.orders USING btree (tenant, subject, seq)"),
            db.read(c -> strings(c, "SELECT indexname || ':' || indexdef FROM pg_indexes WHERE indexname = 'orders_by_owner'")));
      }
    }
  }

  private static List<String> strings(Connection c, String sql) throws java.sql.SQLException {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) out.add(rs.getString(1));
    }
    return out;
  }
}
