package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * RC-02: the in-memory engine keeps nothing across a restart, so every non-final order loses its
 * workflow. At the next start each orphan gets a new run that loads it from the database: the
 * CREATED order still expires at its stored deadline, the UNKNOWN one converges by query, and the
 * reconciliation's repair pass finds nothing left to do.
 */
@Tag("in-memory-only")
class Rc02OrphanRepairTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "2m");
  @RegisterExtension static final Evidence ev = new Evidence("RC-02", "orphans after an engine restart are repaired");

  @Test
  void orphansAreRepaired() throws Exception {
    stack.sku("sku-rc02", 10, 5);
    HttpJson buyer = stack.api.login("t1", "user-0201");
    String created = Buyers.create(buyer, "rc02-a", "sku-rc02", 1).text("order_id");
    String paid = Buyers.create(buyer, "rc02-b", "sku-rc02", 1).text("order_id");
    String unknown = Buyers.create(buyer, "rc02-c", "sku-rc02", 1).text("order_id");
    ev.equal("PAID", Buyers.pay(buyer, paid).text("status"), "one order PAID");
    Buyers.fault(stack.channel, unknown, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(buyer, unknown).text("status"), "one order UNKNOWN");
    stack.stop();
    ev.note("STAGE stopped; the in-memory engine forgets every workflow");
    stack.start();
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", created);
    ev.equal("RUNNING", stack.workflowStatus(workflowId), "the CREATED order has a running workflow again");
    ev.equal("RUNNING", stack.workflowStatus(stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", unknown)),
        "the UNKNOWN order has a running workflow again");

    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", created),
        "the CREATED order waits for its stored deadline");
    stack.skip(Duration.ofSeconds(61)); // past the stored reservation deadline
    stack.awaitStatus(created, "CANCELLED", 20_000);
    ev.note("timeline " + created + ": " + stack.sql.timeline(created));
    ev.check(stack.sql.timeline(created).endsWith("[CREATED->CANCELLED v2 reservation expired]"), "expired at its stored deadline");
    stack.skip(Duration.ofSeconds(60)); // the resumed run's first query
    stack.awaitStatus(unknown, "PAID", 20_000);
    String repair = stack.admin.post("/tasks/reconcile?repair=true", null).raw();
    ev.check(repair.contains("repaired=0"), "the repair pass finds nothing left");
    ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", unknown), "one ORDER_PAID event");
    stack.checkReconcileClean(ev, "reconcile clean");
  }
}
