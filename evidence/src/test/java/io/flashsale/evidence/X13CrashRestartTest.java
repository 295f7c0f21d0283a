package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the whole service JVM ({@code server}, with its dev server and PostgreSQL as children in
 * their own process groups) is SIGKILLed. Its children outlive it. The next start on the same data
 * folder finds them, stops them and takes over, instead of refusing; every order and its workflow
 * is still there and converges.
 */
@Tag("dev-server-only")
class X13CrashRestartTest {
  // this class's own stack only serves the free-port and data-folder helpers; the service under
  // test runs in child JVMs on a data folder of its own
  /** The crashed service's reservation TTL: longer than a restart takes on an idle machine. */
  private static final long TTL_MS = 30_000;
  private long createdAt;

  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("X-13", "service SIGKILL: next start stops the leftovers, keeps everything");

  @Test
  void crashThenRestart() throws Exception {
    Path data = stack.dataDir().resolve("crashed-service");
    Files.createDirectories(data);
    Map<String, String> props = new LinkedHashMap<>();
    int api = Stack.freePortForChild();
    int admin = Stack.freePortForChild();
    props.put("dw.server.applicationConnectors[0].port", String.valueOf(api));
    props.put("dw.server.adminConnectors[0].port", String.valueOf(admin));
    props.put("dw.dataDir", data.toString());
    props.put("dw.temporal.engine", "dev-server");
    props.put("dw.temporal.embeddedPort", String.valueOf(Stack.freePortForChild()));
    props.put("dw.temporal.uiPort", "0");
    props.put("dw.channel.embeddedPort", String.valueOf(Stack.freePortForChild()));
    props.put("dw.consumer.port", String.valueOf(Stack.freePortForChild()));
    props.put("dw.orders.reservationTtl", TTL_MS + "ms");
    // the crash is the point here, not a slow charge: the stacks' channel deadline (a child's own
    // default would be the service's 300 ms), so a loaded machine does not turn the pay UNKNOWN
    props.put("dw.channel.timeout", Stack.CHANNEL_TIMEOUT);
    props.put("dw.temporal.createDeadline", Stack.CREATE_DEADLINE);
    HttpJson apiClient = new HttpJson("http://127.0.0.1:" + api, null);
    String created;
    String paid;
    try (ChildJvm first = ChildJvm.start("x13-server-1", props, "server", "embedded.yml")) {
      first.awaitLog("=== flashsale is up ===", 120_000);
      HttpJson buyer = apiClient.login("t1", "user-1301");
      paid = Buyers.create(buyer, "x13-a", "sku-lab-01", 1).text("order_id");
      ev.equal("PAID", Buyers.pay(buyer, paid).text("status"), "one order PAID");
      created = Buyers.create(buyer, "x13-b", "sku-lab-01", 1).text("order_id");
      createdAt = System.currentTimeMillis();
      ev.equal(137, first.killHard(), "the service JVM is SIGKILLed (137)");
    }
    try {
      afterTheCrash(data, props, apiClient, admin, paid, created);
    } finally {
      // a failed check must not leave the crashed service's children running
      for (String pidFile : List.of("temporal-dev-server.pid", "postgres/postmaster.pid")) {
        Path f = data.resolve(pidFile);
        if (!Files.exists(f)) continue;
        String first = Files.readAllLines(f).get(0).trim().split(" ")[0];
        ProcessHandle.of(Long.parseLong(first))
            .filter(h -> h.info().commandLine().orElse("").contains(data.toString()))
            .ifPresent(ProcessHandle::destroy);
      }
    }
  }

  private void afterTheCrash(Path data, Map<String, String> props, HttpJson apiClient, int admin, String paid,
      String created) throws Exception {
    long devServerPid = Long.parseLong(Files.readString(data.resolve("temporal-dev-server.pid")).trim().split(" ")[0]);
    long postmasterPid = Long.parseLong(Files.readAllLines(data.resolve("postgres/postmaster.pid")).get(0).trim());
    ev.check(ProcessHandle.of(devServerPid).map(ProcessHandle::isAlive).orElse(false),
        "the dev server outlived the JVM (own process group)");
    ev.check(ProcessHandle.of(postmasterPid).map(ProcessHandle::isAlive).orElse(false),
        "PostgreSQL outlived the JVM (own process group)");

    try (ChildJvm second = ChildJvm.start("x13-server-2", props, "server", "embedded.yml")) {
      second.awaitLog("=== flashsale is up ===", 120_000);
      ev.check(second.logContains("stopping the Temporal dev server left running by an earlier start (pid "
          + devServerPid + ")"), "the next start stopped the leftover dev server");
      ev.check(second.logContains("stopping the PostgreSQL left running by an earlier start (pid " + postmasterPid),
          "the next start stopped the leftover PostgreSQL");
      ev.check(!ProcessHandle.of(devServerPid).map(ProcessHandle::isAlive).orElse(false), "the old dev server is gone");
      HttpJson buyer = apiClient.login("t1", "user-1301");
      ev.equal("PAID", buyer.get("/orders/" + paid).text("status"), "the PAID order is still there");
      // a restart slower than the TTL on a loaded machine finds it expired already: its run survived either way
      long sinceCreate = System.currentTimeMillis() - createdAt;
      HttpJson.Reply afterRestart = buyer.get("/orders/" + created);
      ev.note("the CREATED order " + sinceCreate + " ms after its create: " + afterRestart.text("status") + " "
          + afterRestart.raw());
      ev.check(afterRestart.text("status").equals("CREATED")
              || afterRestart.text("status").equals("CANCELLED") && afterRestart.raw().contains("reservation expired")
                  && sinceCreate >= TTL_MS,
          "the CREATED order is still there (or already expired by its own run)");
      ev.check(!second.logContains("had no running workflow"), "no order needed repair: the workflows survived");
      long deadline = System.currentTimeMillis() + 60_000;
      while (!"CANCELLED".equals(buyer.get("/orders/" + created).text("status")) && System.currentTimeMillis() < deadline) {
        Thread.sleep(200);
      }
      ev.equal("CANCELLED", buyer.get("/orders/" + created).text("status"), "the CREATED order still expires");
      // a second service on the same folder is refused, and leaves the running one's engine alone
      long running = Long.parseLong(Files.readString(data.resolve("temporal-dev-server.pid")).trim().split(" ")[0]);
      try (ChildJvm third = ChildJvm.start("x13-server-3", props, "server", "embedded.yml")) {
        int exit = third.awaitExit(120_000);
        ev.check(exit != 0 && third.log().contains("is in use by another running flashsale"),
            "a second service on the same data folder is refused (exit " + exit + ")");
      }
      ev.check(ProcessHandle.of(running).map(ProcessHandle::isAlive).orElse(false),
          "the running service's dev server was left alone");
      String summary = new HttpJson("http://127.0.0.1:" + admin, null).post("/tasks/reconcile", null).raw().trim();
      summary = summary.substring(summary.lastIndexOf('\n') + 1);
      ev.note(summary);
      ev.check(summary.contains(" mismatches=0 ") && summary.contains(" pending=0 ") && summary.endsWith("drift=0"),
          "reconcile clean after the crash and restart");
    }
  }
}
