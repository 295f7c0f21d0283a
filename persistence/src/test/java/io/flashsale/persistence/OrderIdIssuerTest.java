package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Ids as the create issues them on a migrated PostgreSQL: the database made its own 32-byte key
 * (one row, no second), each id is the next number of the sequence under that key, and ids of
 * consecutive numbers are not consecutive. The key is read once: an issuer keeps it.
 */
class OrderIdIssuerTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  @Test
  void theDatabaseHasOneKeyOfItsOwn() {
    byte[] key = pg.db().read(OrderIdIssuer::key);
    assertEquals(32, key.length);
    assertEquals(1L, pg.number("SELECT count(*) FROM order_id_key"));
    assertThrows(Database.DataError.class, () -> pg.db().inTx(c -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO order_id_key (key) VALUES (?)")) {
        ps.setBytes(1, new byte[32]);
        return ps.executeUpdate();
      }
    }), "a second key is refused");
  }

  @Test
  void eachIdIsTheNextNumberUnderTheDatabasesKey() {
    OrderIdIssuer issuer = new OrderIdIssuer();
    OrderIds keyed = new OrderIds(pg.db().read(OrderIdIssuer::key));
    List<OrderIdIssuer.Issued> issued = new ArrayList<>();
    for (int i = 0; i < 5; i++) issued.add(pg.db().inTx(issuer::next));
    for (int i = 0; i < issued.size(); i++) {
      OrderIdIssuer.Issued one = issued.get(i);
      assertTrue(one.orderId().matches("ord-[0-9]{12}"), one.orderId());
      assertEquals(keyed.id(one.seq()), one.orderId());
      if (i > 0) {
        assertEquals(issued.get(i - 1).seq() + 1, one.seq(), "the sequence's next number");
        long gap = Math.abs(number(one.orderId()) - number(issued.get(i - 1).orderId()));
        assertTrue(gap > 1, "consecutive numbers, ids " + gap + " apart");
      }
    }
  }

  @Test
  void theKeyIsReadOnceAndKept() {
    OrderIdIssuer issuer = new OrderIdIssuer();
    OrderIdIssuer.Issued first = pg.db().inTx(issuer::next);
    byte[] key = pg.db().read(OrderIdIssuer::key);
    pg.db().inTx(c -> c.createStatement().executeUpdate("UPDATE order_id_key SET key = decode(repeat('ab', 32), 'hex')"));
    try {
      OrderIdIssuer.Issued second = pg.db().inTx(issuer::next);
      assertEquals(new OrderIds(key).id(second.seq()), second.orderId(), "the key read at the first id");
      assertNotEquals(first.orderId(), second.orderId());
    } finally {
      pg.db().inTx(c -> {
        try (PreparedStatement ps = c.prepareStatement("UPDATE order_id_key SET key = ?")) {
          ps.setBytes(1, key);
          return ps.executeUpdate();
        }
      });
    }
    assertArrayEquals(key, pg.db().read(OrderIdIssuer::key));
  }

  @Test
  void aCreatedOrderKeepsItsNumber() {
    OrderIdIssuer issuer = new OrderIdIssuer();
    OrderIdIssuer.Issued issued = pg.db().inTx(issuer::next);
    OrderRow row = TestOrders.unsaved(issued.orderId(), TestOrders.TENANT, "issuer-buyer", "k1");
    pg.db().inTx(c -> OrderTransitions.insertCreated(c, row, issued.seq(), null, TestOrders.CREATE_CAUSE));
    assertEquals(issued.seq(), pg.number("SELECT seq FROM orders WHERE order_id = ?", issued.orderId()));
  }

  private static long number(String id) {
    return Long.parseLong(id.substring(4));
  }

}
