package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.persistence.Database;
import io.flashsale.workflows.OrderActivities;
import org.junit.jupiter.api.Test;

/** The pool's wait for a connection against the workflow's database activity timeout. */
class DatabaseTimeoutsTest {
  @Test
  void aPoolWaitEndsBeforeTheActivityTimesOut() {
    assertTrue(Database.DEFAULT_CONNECTION_TIMEOUT.compareTo(OrderActivities.DB_ACTIVITY_TIMEOUT) < 0);
  }
}
