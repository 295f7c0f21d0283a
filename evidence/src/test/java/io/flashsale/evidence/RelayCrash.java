package io.flashsale.evidence;

import java.sql.Connection;
import java.util.Map;

/**
 * The relay crash of C29-12, shared with C29-18: a relay in its own JVM claims the unpublished
 * events and delivers them, the consumer acknowledges every one, and the relay is killed
 * (SIGKILL) while its "published" marks wait on a lock the experiment holds. The marks roll back,
 * so the next relay delivers the same events again.
 */
final class RelayCrash {
  private RelayCrash() {}

  /** Runs the crash over the events unpublished now (expected: that many); returns when the marks rolled back. */
  static void afterAcks(Stack stack, Evidence ev, String name, long expected) throws Exception {
    ev.equal(expected, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"),
        expected + " unpublished events");
    long arrivals = stack.sql.count("SELECT count(*) FROM fulfillment.ful_received");
    String consumer = stack.wiring.consumer().url();
    try (Connection lock = stack.db().dataSource().getConnection()) {
      lock.setAutoCommit(false);
      lock.createStatement().execute("LOCK TABLE outbox IN SHARE MODE"); // lets the claim through, holds the marks
      try (ChildJvm relay = ChildJvm.start(name, Map.of(),
          Map.of(io.flashsale.launcher.cli.RelayCommand.DELIVERY_SECRET_ENV, stack.wiring.deliverySecret()),
          "relay", "--database-url", stack.wiring.jdbcUrl(),
          "--consumer-url", consumer, "--batch", "10", "--name", "child")) {
        stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM fulfillment.ful_received") == arrivals + expected,
            60_000, "consumer did not acknowledge " + expected);
        stack.awaitBlockedOnLock("UPDATE outbox", 15_000);
        ev.note("STAGE consumer acknowledged " + expected + ", relay pid " + relay.pid()
            + " about to mark them published");
        ev.equal(137, relay.killHard(), "relay exit status 137 (SIGKILL)");
      }
      lock.commit();
    }
    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'UPDATE outbox%'"
        + " AND state <> 'idle'") == 0, 15_000, "the killed relay's session did not end");
    ev.equal(expected, stack.sql.count("SELECT count(*) FROM outbox WHERE published_at IS NULL"),
        "the marks rolled back: " + expected + " unpublished");
  }
}
