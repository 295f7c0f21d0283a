package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * worker failover on the real server. The only worker process (workflows and activities)
 * is SIGKILLed mid-payment, after the channel charged and before its reply came back. A second
 * worker process on the same task queue takes the order over: the server moves the workflow task
 * off the dead worker's sticky queue, the lost charge activity times out, the workflow takes that
 * as no answer (UNKNOWN) and converges it by query. One charge, one event, reconcile clean. The
 * second worker then gets SIGTERM: it exits 0 with one exit record.
 */
@Tag("dev-server-only")
class X11WorkerFailoverTest {
  // the API process hosts no worker: the order lives only on the child worker processes
  @RegisterExtension static final Stack stack = new Stack().with("worker", false);
  @RegisterExtension static final Evidence ev = new Evidence("X-11", "worker process SIGKILL mid-payment → second worker → PAID");

  @Test
  void secondWorkerTakesOver() throws Exception {
    stack.sku("sku-x11", 5, 3);
    // the reply comes 4 s late: still within the worker's deadline, so the charge is in flight when it is killed
    Map<String, String> props = stack.workerProperties(5_000);
    try (ChildJvm first = ChildJvm.start("x11-worker-1", props, "worker", "embedded.yml")) {
      first.awaitLog("worker polling", 60_000);
      ev.check(first.logContains("workflows=true, activities=true"), "the first worker hosts workflows and activities");
      HttpJson buyer = stack.api.login("t1", "user-1101");
      String id = Buyers.create(buyer, "x11", "sku-x11", 1).text("order_id");
      Buyers.fault(stack.channel, id, Map.of("reply_delay_ms", 4_000, "hold_callbacks", true));
      CompletableFuture<HttpJson.Reply> pay = CompletableFuture.supplyAsync(() -> Buyers.pay(buyer, id));
      stack.awaitTrue(() -> Buyers.chargeRequests(stack.channel, id) == 1, 15_000, "charge never reached the channel");
      long killedAt = System.currentTimeMillis();
      ev.note("STAGE charge recorded at the channel, reply pending; worker pid " + first.pid() + " killed");
      ev.equal(137, first.killHard(), "worker exit status 137 (SIGKILL)");
      ev.equal("PAYING", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id),
          "PAYING was committed before the channel call");
      ev.equal("CHARGED", stack.channel.get("/charges/" + id).text("status"), "the channel charged");

      try (ChildJvm second = ChildJvm.start("x11-worker-2", stack.workerProperties(), "worker", "embedded.yml")) {
        second.awaitLog("worker polling", 60_000);
        stack.awaitStatus(id, "PAID", 90_000);
        ev.note("PAID " + (System.currentTimeMillis() - killedAt) + " ms after the kill");
        HttpJson.Reply answer = pay.get(60, TimeUnit.SECONDS);
        ev.note("the buyer's pay request answered " + answer.status() + " " + answer.raw());
        String timeline = stack.sql.timeline(id);
        ev.note("timeline " + id + ": " + timeline);
        ev.check(timeline.endsWith("[PAYING->UNKNOWN v3 charge activity failure] [UNKNOWN->PAID v4 query]"),
            "the second worker took the lost charge as no answer and converged by query");
        ev.equal(1, Buyers.chargeRequests(stack.channel, id), "exactly one charge request");
        ev.equal(1L, stack.sql.count("SELECT count(*) FROM outbox WHERE order_id = ?", id), "one ORDER_PAID event");
        stack.channel.post("/_callbacks/release", Map.of("merchant_order", id, "order", "fifo"));
        stack.awaitNoticesApplied(1, 30_000);
        ev.equal("DUPLICATE PAID", stack.sql.text("SELECT effect FROM payment_notification WHERE merchant_order = ?", id),
            "the callback sent before the crash arrives as a duplicate");
        stack.checkReconcileClean(ev, "reconcile clean");

        // the surviving worker is stopped the way an orchestrator stops it
        second.sigterm();
        ev.equal(0, second.awaitExit(30_000), "the worker exits 0 on SIGTERM");
        String record = second.log().lines().filter(l -> l.startsWith("flashsale worker stopped")).findFirst().orElse("");
        ev.note("exit record: " + record);
        ev.check(record.contains("after SIGTERM") && record.contains("workerTerminated=true")
            && record.contains("connectionClosed=true") && record.endsWith("; clean"),
            "one exit record: the worker's tasks finished and its connection closed");
      }
    }
  }
}
