package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
 * V9 on a database with orders: they are on the default channel, a create records the default
 * channel, the read side returns it, and the column refuses no channel at all.
 */
class OrderChannelMigrationTest {

  @Test
  void existingOrdersAndNewOnesAreOnTheDefaultChannel() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start()) {
      String url = pg.getJdbcUrl("postgres", "postgres");
      Flyway.configure().dataSource(url, "postgres", "postgres").locations("classpath:db/migration").target("8")
          .load().migrate();
      try (Connection c = pg.getPostgresDatabase().getConnection(); Statement st = c.createStatement()) {
        st.execute("INSERT INTO orders (order_id, tenant, subject, request_key, payload, sku, quantity, amount,"
            + " status, version, reservation_key, workflow_id) VALUES ('ord-old', 't1', 'u1', 'k-old', '{}', 'sku-1', 1,"
            + " 1990, 'CREATED', 1, 'ord-old/r1', 'wf-old')");
      }

      try (Database db = new Database(url, "postgres", "postgres", 2, Duration.ofSeconds(10))) {
        db.migrate();
        assertEquals(List.of("ord-old:default"),
            db.read(c -> strings(c, "SELECT order_id || ':' || channel FROM orders")));

        TestOrders.create(db, "ord-new", "t1", "u2");
        OrderQueries queries = new OrderQueries(db);
        assertEquals(OrderQueries.DEFAULT_CHANNEL, queries.get("ord-new").channel());
        assertEquals(OrderQueries.DEFAULT_CHANNEL, queries.get("ord-old").channel());
        assertEquals(List.of("default"), queries.list("t1", "u2", null, 10).stream()
            .map(OrderQueries.OrderDetails::channel).toList());

        assertEquals(List.of("channel:text:NO:'default'::text"), db.read(c -> strings(c,
            "SELECT column_name || ':' || data_type || ':' || is_nullable || ':' || column_default"
                + " FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'channel'")));
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
