package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * pgbench's order ids must be the service's: once the sequence passed 9 999, an id cut to four
 * digits collided with an earlier order's reservation and aborted every pgbench client.
 */
class PgbenchOrderIdTest {
  @Test
  void theScriptsOrderIdIsTheServicesFormatForAnyNumber() throws Exception {
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
        Connection c = pg.getPostgresDatabase().getConnection();
        Statement st = c.createStatement()) {
      for (long n : new long[] {7, 123, 9_999, 10_000, 12_345, 1_234_567}) {
        try (ResultSet rs = st.executeQuery("SELECT " + Pgbench.orderIdExpression(n + "::bigint"))) {
          rs.next();
          assertEquals(String.format("ord-%04d", n), rs.getString(1), "order number " + n);
        }
      }
    }
  }
}
