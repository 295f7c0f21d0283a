package io.flashsale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.persistence.MigratedPostgres;
import io.flashsale.persistence.Skus;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A run finds the row a lost attempt of its own create committed, and no other, on a real PostgreSQL. */
class FindOfRunTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  @Test
  void theRowOfTheKeyMadeByThisWorkflowAndNoOther() {
    assertEquals(Skus.Upsert.CREATED, new Skus(pg.db()).upsert("t1", "sku-f", 5, 1990L, 3).outcome());
    OrderActivitiesImpl db = new OrderActivitiesImpl(pg.db(), Duration.ofMinutes(1));
    CreateOrder request = new CreateOrder("t1", "user-1", "k1", "sku-f", 1, null);
    assertNull(db.findOfRun("t1", "user-1", "k1", "order:t1:user-1:k1"), "before the reserve: nothing");
    assertEquals(CreateOutcome.CREATED, db.reserve(request, "order:t1:user-1:k1").outcome());

    OrderView found = db.findOfRun("t1", "user-1", "k1", "order:t1:user-1:k1");
    assertEquals(OrderStatus.CREATED, found.status());
    assertEquals(1, found.version());
    assertEquals("sku-f", found.sku());
    assertNull(db.findOfRun("t1", "user-1", "k1", "order:t1:user-1:other-run"), "another workflow's row is not this run's");
    assertNull(db.findOfRun("t1", "user-1", "k2", "order:t1:user-1:k1"), "another key");
    assertNull(db.findOfRun("t1", "user-2", "k1", "order:t1:user-1:k1"), "another buyer");
  }
}
