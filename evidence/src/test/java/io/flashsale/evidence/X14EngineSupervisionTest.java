package io.flashsale.evidence;

import io.flashsale.devstack.DevServer;
import io.flashsale.devstack.EmbeddedStack;
import io.flashsale.launcher.cli.HttpJson;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the dev server dies under the running service (SIGKILL). Its supervisor starts it again
 * on the same state file; the order created before is still there with its workflow, and the
 * service takes new orders and payments again.
 */
@Tag("dev-server-only")
class X14EngineSupervisionTest {
  @RegisterExtension static final Stack stack = new Stack().with("temporal.devServerDbFile", "");
  @RegisterExtension static final Evidence ev = new Evidence("X-14", "dev server SIGKILL under the service → supervisor restarts it");

  @Test
  void engineIsRestarted() throws Exception {
    stack.sku("sku-x14", 5, 3);
    HttpJson buyer = stack.api.login("t1", "user-1401");
    String before = Buyers.create(buyer, "x14-a", "sku-x14", 1).text("order_id");
    DevServer dev = EmbeddedStack.of(stack.wiring.stack()).devServer().orElseThrow();
    long pid = dev.pid();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    ev.note("STAGE dev server pid " + pid + " killed with SIGKILL");
    stack.awaitTrue(() -> dev.pid() != pid, 60_000, "the supervisor did not start a new dev server");
    ev.note("new dev server pid " + dev.pid());
    ev.check(ProcessHandle.of(dev.pid()).map(ProcessHandle::isAlive).orElse(false), "a new dev server runs");

    // the first calls after the restart may meet an engine still starting: the client retries
    HttpJson.Reply paid = null;
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      paid = Buyers.pay(buyer, before);
      if (paid.status() == 200) break;
      Thread.sleep(500);
    }
    ev.equal("PAID", paid.text("status"), "the order created before the kill is paid after it (its workflow survived)");
    String after = Buyers.create(buyer, "x14-b", "sku-x14", 1).text("order_id");
    ev.equal("PAID", Buyers.pay(buyer, after).text("status"), "a new order is created and paid");
    stack.awaitNoticesApplied(2, 15_000);
    stack.checkReconcileClean(ev, "reconcile clean");
  }
}
