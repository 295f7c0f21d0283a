package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * C29-10: the worker process that makes the charge (it hosts the activities, in its own JVM) is
 * killed with SIGKILL after the channel recorded the charge and before the reply came back. The
 * order was committed PAYING before the call, so nothing is lost: the charge activity times out,
 * the workflow takes that as no answer (UNKNOWN), and a second worker process converges it by
 * query to PAID. One charge, one event.
 */
class C2910WorkerKilledAfterChargeTest {
  @RegisterExtension static final Stack stack = new Stack().with("workerActivities", false);
  @RegisterExtension static final Evidence ev = new Evidence("C29-10", "worker SIGKILL after charge → resumes → PAID");

  @Test
  void workerKilledAfterCharge() throws Exception {
    stack.sku("sku-c2910", 5, 3);
    // the reply comes 4 s late: still within the worker's deadline, so the charge is in flight when it is killed
    try (ChildJvm first = ChildJvm.start("c2910-worker-1", stack.workerProperties(5_000), "worker", "embedded.yml")) {
      first.awaitLog("worker polling", 60_000);
      HttpJson buyer = stack.api.login("t1", "user-1001");
      String id = Buyers.create(buyer, "c2910", "sku-c2910", 1).text("order_id");
      Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", 4_000, "hold_callbacks", true));
      CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, id));
      stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, id) == 1, 15_000, "charge never reached the channel");
      ev.note("STAGE charge recorded at the channel, reply pending; worker pid " + first.pid() + " killed");
      int exit = first.killHard();
      ev.equal(137, exit, "worker exit status 137 (SIGKILL)");
      ev.equal("PAYING", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id),
          "PAYING was committed before the channel call");
      ev.equal("CHARGED", stack.channel.get("/charges/" + id).text("status"), "the channel charged");

      try (ChildJvm second = ChildJvm.start("c2910-worker-2", stack.workerProperties(), "worker", "embedded.yml")) {
        second.awaitLog("worker polling", 60_000);
        stack.skip(Duration.ofSeconds(11)); // the lost charge activity's start-to-close timeout
        stack.awaitStatus(id, "PAID", 30_000);
        ev.note("pay answered " + pay.get().status() + " " + pay.get().text("status"));
        String timeline = stack.sql.timeline(id);
        ev.note("timeline " + id + ": " + timeline);
        ev.check(timeline.endsWith("[UNKNOWN->PAID v4 query]"), "converged by query after the crash");
        ev.equal(1, Buyers.chargeRequests(stack.channel, id), "exactly one charge request");
        ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "one ORDER_PAID event");
        stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
        stack.awaitNoticesApplied(1, 15_000);
        ev.equal("DUPLICATE PAID", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", id),
            "the callback sent before the crash arrives as a duplicate");
        String summary = stack.checkReconcileClean(ev, "reconcile clean");
      }
    }
  }
}
