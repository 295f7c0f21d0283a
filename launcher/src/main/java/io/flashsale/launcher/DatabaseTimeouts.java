package io.flashsale.launcher;

import io.flashsale.workflows.OrderActivities;
import java.time.Duration;

/** The pool's connection timeout, checked against the database activity timeout. */
public final class DatabaseTimeouts {
  private DatabaseTimeouts() {}

  /**
   * A wait for a connection must end before the activity attempt times out, or an outage turns
   * every attempt into a timeout instead of a quick failure and a backed-off retry.
   */
  public static Duration connectionTimeout(FlashsaleConfiguration.DatabaseSettings db) {
    Duration d = Duration.ofMillis(db.connectionTimeoutMs);
    if (d.toMillis() < 250 || d.compareTo(OrderActivities.DB_ACTIVITY_TIMEOUT) >= 0) {
      throw new IllegalArgumentException("database.connectionTimeoutMs must be in 250.."
          + (OrderActivities.DB_ACTIVITY_TIMEOUT.toMillis() - 1) + " (below the database activity timeout), got "
          + db.connectionTimeoutMs);
    }
    return d;
  }
}
