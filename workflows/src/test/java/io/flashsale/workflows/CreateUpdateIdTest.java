package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A retry's update id: the same for the same key and body, another for another body. */
class CreateUpdateIdTest {
  @Test
  void derivedFromKeyAndBody() {
    String id = Orders.createUpdateId(new CreateOrder("t1", "u1", "k1", "sku-1", 2, null));
    assertEquals(id, Orders.createUpdateId(new CreateOrder("t1", "u1", "k1", "sku-1", 2, null)));
    assertNotEquals(id, Orders.createUpdateId(new CreateOrder("t1", "u1", "k1", "sku-1", 1, null)));
    assertNotEquals(id, Orders.createUpdateId(new CreateOrder("t1", "u1", "k1", "sku-1", 2, "note")));
    assertNotEquals(id, Orders.createUpdateId(new CreateOrder("t1", "u1", "k2", "sku-1", 2, null)));
    assertTrue(id.matches("create:[0-9a-f]{32}"), id);
  }
}
