package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.devstack.cluster.Cluster;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.workflows.codec.PayloadEncryption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * the production shape under faults (docs/DESIGN.md §The production shape on one machine).
 * The Temporal server 1.29.1 on its own PostgreSQL (SQL visibility) and the Web UI server, from
 * the installed binaries; the orders' PostgreSQL, the channel stub and the fulfillment consumer
 * with API A in the test's JVM; API B, two worker processes and one relay as their own JVMs;
 * payloads encrypted everywhere (one key, k1). No process but the API instances takes requests,
 * only the workers run orders.
 * <ol>
 *   <li>a warm-up, then a measured clean sale split across both APIs: created/s, PAID/s and CPU per
 *       order of each process (the FIGURES line, the numbers evidence/bench/PERFORMANCE.md quotes);
 *   <li>a scarce sale, its crowd split across both APIs; once it has started, API B and worker 2 are
 *       SIGKILLed and the Temporal server is SIGKILLed and started again. B's buyers go on at A with
 *       the same keys (as a load balancer would send them). Every order converges to an end state;
 *       no oversell; the channel's ledger holds one charge for each PAID order and none kept for
 *       any other; every event reaches the consumer once; reconcile is clean;
 *   <li>the stored history holds no readable payload; the real CLI counts the PAID orders by their
 *       search attribute (SQL visibility); the Web UI server lists them (Chromium).
 * </ol>
 */
@Tag("dev-server-only")
class X30ProductionShapeTest {
  private static final Path HOME = Path.of("..").toAbsolutePath().normalize();
  private static final int SCARCE_STOCK = 20;
  private static final int SCARCE_CROWD = 60;

  @RegisterExtension static final Evidence ev = new Evidence("X-30",
      "production shape under faults: 2 APIs, 2 workers, 1 relay on the Temporal server over PostgreSQL;"
          + " API, worker and server killed mid-sale; converged, no oversell, one charge each, reconcile clean");

  private final Stack stack = ProductionFleet.stack().with("temporal.engine", "external");

  @Test
  void theProductionShapeConvergesUnderFaults() throws Exception {
    Cluster.Binaries.find(HOME); // throws with the install command when one is missing
    String chromiumMissing = HeadlessChromium.missing();
    ev.check(chromiumMissing == null, "Chromium and chromedriver are installed (" + chromiumMissing + ")");
    Path root = Path.of("target", "stack-data").toAbsolutePath();
    Files.createDirectories(root);
    Path data = Files.createTempDirectory(root, "X30-cluster-");
    long t0 = System.nanoTime();
    try (Cluster cluster = Cluster.start(new Cluster.Settings(HOME, data, 0, 0, 0, 0, false), ev::note)) {
      stack.with("temporal.target", cluster.temporalAddress());
      // the frontend admits only the deployment's certificates: every process of the fleet holds the service's
      cluster.tls().serviceSettings("service").forEach(stack::with);
      try {
        stack.startFresh("X30");
        try (ProductionFleet fleet = ProductionFleet.start(stack, ev, cluster.temporalAddress(),
            cluster.tls().serviceSettings("service"))) {
          ev.note(String.format("fleet up %.1f s after the start: Temporal %s (server pid %d, its PostgreSQL pid %d), %s",
              (System.nanoTime() - t0) / 1e9, cluster.temporalAddress(), cluster.temporalServerPid(),
              cluster.temporalPostgresPid(), fleet.describe()));
          fleet.warmUp();
          fleet.cleanSale("Temporal server " + Cluster.SERVER_VERSION + " on PostgreSQL", cluster::temporalServerPid,
              cluster.temporalPostgresPid());
          scarceSaleUnderFaults(cluster, fleet);
          ev.check(fleet.relay.isAlive() && fleet.worker1.isAlive(), "the relay and worker 1 ran throughout");
          fleet.eventsReachedTheConsumerOnce();
          stack.checkReconcileClean(ev, "reconcile clean after the faults");
          historyIsEncrypted(cluster);
          cliAndWebUiListThePaidOrders(cluster);
        }
      } finally {
        stack.stop();
      }
    }
  }

  /** A sale that sells out while an API, a worker and the Temporal server die; then its invariants. */
  private void scarceSaleUnderFaults(Cluster cluster, ProductionFleet fleet) throws Exception {
    ChildJvm apiB = fleet.apiB;
    ChildJvm worker2 = fleet.worker2;
    String sku = "sku-x30-scarce";
    stack.sku(sku, SCARCE_STOCK, 1);
    Map<String, Long> faultsAt = new ConcurrentHashMap<>();
    java.util.concurrent.atomic.AtomicLong servedAgainAt = new java.util.concurrent.atomic.AtomicLong(Long.MAX_VALUE);
    Runnable faults = () -> {
      try {
        stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE sku = ?", sku) >= 5
            && stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAYING'", sku) >= 2, 120_000,
            "the scarce sale did not start");
        faultsAt.put("orders before the faults", stack.sql.count("SELECT count(*) FROM orders WHERE sku = ?", sku));
        ev.equal(137, apiB.killHard(), "API B SIGKILLed mid-sale (exit 137)");
        faultsAt.put("PAYING when worker 2 was killed",
            stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status = 'PAYING'", sku));
        ev.equal(137, worker2.killHard(), "worker 2 SIGKILLed mid-sale (exit 137)");
        long killedServer = cluster.temporalServerPid();
        long t = System.nanoTime();
        long restarted = cluster.restartTemporalServer();
        ev.note(String.format("STAGE API B pid %d and worker 2 pid %d SIGKILLed; Temporal server pid %d SIGKILLed and"
            + " started again as pid %d, serving after %.1f s", apiB.pid(), worker2.pid(), killedServer, restarted,
            (System.nanoTime() - t) / 1e9));
        faultsAt.put("orders when the server served again", stack.sql.count("SELECT count(*) FROM orders WHERE sku = ?", sku));
        servedAgainAt.set(System.nanoTime());
      } catch (Exception e) {
        throw new IllegalStateException("the faults: " + e.getMessage(), e);
      }
    };
    // every charge of this sale answers after 1.5 s (the channel's timeout is 3 s): payments are in flight when worker 2 dies
    stack.channel.post("/_faults", Map.of("reply_delay_ms", 1_500));
    ProductionFleet.Sale s;
    try {
      s = fleet.sale(sku, SCARCE_CROWD, 300, faults);
    } finally {
      stack.channel.post("/_faults", Map.of("reply_delay_ms", 0));
    }
    ev.note("scarce sale, " + SCARCE_CROWD + " buyers for " + SCARCE_STOCK + " units: " + s.outcomes() + "; " + faultsAt
        + "; requests sent again (503 or a dead API): " + ProductionFleet.retried() + "; B's buyers that went on at A: " + s.failedOver());
    ev.check(s.faultError() == null, "the faults ran: " + s.faultError());
    ev.check(faultsAt.getOrDefault("PAYING when worker 2 was killed", 0L) > 0,
        "payments were in flight (PAYING) when worker 2 was killed");
    long total = stack.sql.count("SELECT count(*) FROM orders WHERE sku = ?", sku);
    ev.check(s.lastCreateAnsweredAt() > servedAgainAt.get(),
        "the sale went on after the faults: a create was answered after the restarted server served (orders "
            + faultsAt + ", at the end " + total + ")");
    ev.check(s.outcomes().keySet().stream().allMatch(o -> o.startsWith("CREATED") || o.equals("SOLD_OUT")),
        "every buyer got an order or SOLD_OUT " + s.outcomes());
    ev.check(s.outcomes().getOrDefault("SOLD_OUT", 0) > 0, "the sale sold out");

    stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE sku = ? AND status NOT IN"
        + " ('PAID', 'FAILED', 'CANCELLED', 'REFUNDED')", sku) == 0, ProductionFleet.CONVERGE_DEADLINE_MS, "orders not converged");
    Map<String, Integer> statuses = stack.sql.histogram("SELECT status FROM orders WHERE sku = ?", sku);
    long paid = statuses.getOrDefault("PAID", 0);
    ev.note("scarce sale converged: " + new TreeMap<>(statuses));
    for (String id : stack.sql.column("SELECT order_id FROM orders WHERE sku = ? AND status <> 'PAID'", sku)) {
      ev.note("timeline " + id + ": " + stack.sql.timeline(id));
    }
    ev.check(paid <= SCARCE_STOCK, "no oversell: " + paid + " PAID of " + SCARCE_STOCK);
    ev.check(paid > 0, "the sale sold");
    ev.equal((int) (SCARCE_STOCK - paid), stack.sql.remaining(sku), "remaining = stock - PAID (every other order gave its unit back)");
    ev.equal(paid, stack.sql.count("SELECT coalesce(sum(quantity), 0) FROM reservation WHERE sku = ? AND status IN"
        + " ('HELD', 'CONFIRMED')", sku), "conservation: the units held are the PAID orders'");
    ev.equal(total, stack.sql.count("SELECT count(DISTINCT workflow_id) FROM orders WHERE sku = ?", sku),
        "one workflow per order");
    oneChargePerPaidOrder(sku);
  }

  /** The channel's ledger: each PAID order charged once and not refunded; no other order keeps money. */
  private void oneChargePerPaidOrder(String sku) {
    Map<String, int[]> money = new TreeMap<>(); // order → {charges, refunds}
    for (JsonNode row : stack.channel.get("/statement").body().path("rows")) {
      int[] m = money.computeIfAbsent(row.path("merchant_order").asText(), k -> new int[2]);
      if ("CHARGE".equals(row.path("type").asText())) m[0]++;
      if ("REFUND".equals(row.path("type").asText())) m[1]++;
    }
    List<String> wrong = new ArrayList<>();
    int chargeRequests = 0;
    for (String id : stack.sql.column("SELECT order_id FROM orders WHERE sku = ?", sku)) {
      String status = stack.sql.text("SELECT status FROM orders WHERE order_id = ?", id);
      int[] m = money.getOrDefault(id, new int[2]);
      boolean right = "PAID".equals(status) ? m[0] == 1 && m[1] == 0 : m[0] <= 1 && m[0] == m[1];
      if (!right) wrong.add(id + " " + status + " charges " + m[0] + " refunds " + m[1]);
      chargeRequests += Buyers.chargeRequests(stack.channel, id);
    }
    ev.note("charge requests the channel received for the scarce sale's orders: " + chargeRequests);
    ev.check(wrong.isEmpty(), "the ledger: one charge for each PAID order, none kept for any other " + wrong);
  }

  /** The stored history of a PAID order through the real CLI: no payload in clear but those clear by design. */
  private void historyIsEncrypted(Cluster cluster) throws Exception {
    String orderId = stack.sql.text("SELECT order_id FROM orders WHERE sku = 'sku-x30-scarce' AND status = 'PAID'"
        + " ORDER BY order_id LIMIT 1");
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
    String out = cli(cluster, "workflow", "show", "--workflow-id", workflowId, "--output", "json");
    JsonNode history = HttpJson.JSON.readTree(out.substring(out.indexOf('{')));
    List<X32PayloadEncryptionTest.Found> sealed = X32PayloadEncryptionTest.payloads(history, "").stream()
        .filter(p -> !p.indexed()).toList();
    String subject = stack.sql.text("SELECT subject FROM orders WHERE order_id = ?", orderId);
    ev.check(!sealed.isEmpty(), "the history of " + orderId + " has payloads");
    ev.check(sealed.stream().allMatch(p -> "binary/encrypted".equals(p.meta("encoding"))
            && "k1".equals(p.meta(PayloadEncryption.KEY_ID))),
        sealed.size() + " payloads of " + orderId + "'s stored history (outside the search attributes), all binary/encrypted with k1");
    ev.check(sealed.stream().noneMatch(p -> p.plain().contains(subject)),
        "no payload of the stored history holds the buyer's subject");
  }

  /**
   * SQL visibility: the orders the CLI lists by OrderStatus are the PAID rows; the Web UI server
   * lists them. Counted by workflow id: a notice that comes after a PAID order's run ended starts a
   * run of its own, which shows the same status (so {@code workflow count} counts runs, not orders).
   */
  private void cliAndWebUiListThePaidOrders(Cluster cluster) throws Exception {
    java.util.Set<String> paidWorkflows = new java.util.TreeSet<>(
        stack.sql.column("SELECT workflow_id FROM orders WHERE status = 'PAID'"));
    java.util.Set<String> listed = new java.util.TreeSet<>();
    String counted = "";
    for (long end = System.currentTimeMillis() + 60_000; System.currentTimeMillis() < end; Thread.sleep(500)) {
      counted = cli(cluster, "workflow", "count", "--query", "OrderStatus=\"PAID\"").trim();
      listed = workflowIds(cli(cluster, "workflow", "list", "--query", "OrderStatus=\"PAID\"", "--limit", "10000",
          "--output", "json"));
      if (listed.equals(paidWorkflows)) break;
    }
    ev.note("temporal workflow list --query 'OrderStatus=\"PAID\"' → " + listed.size() + " workflow ids; workflow count → "
        + counted + " runs (PAID rows " + paidWorkflows.size() + ")");
    ev.equal(paidWorkflows, listed, "the CLI lists every PAID order, and no other, by its search attribute");
    webUiListsAPaidOrder(cluster);
  }

  /** The distinct workflow ids in the CLI's JSON listing. */
  private static java.util.Set<String> workflowIds(String json) {
    java.util.Set<String> ids = new java.util.TreeSet<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"workflowId\"\\s*:\\s*\"([^\"]+)\"").matcher(json);
    while (m.find()) ids.add(m.group(1));
    return ids;
  }

  private void webUiListsAPaidOrder(Cluster cluster) throws Exception {
    String workflowId = stack.sql.text("SELECT workflow_id FROM orders WHERE sku = 'sku-x30-scarce' AND status = 'PAID'"
        + " ORDER BY order_id DESC LIMIT 1");
    String url = cluster.webUi() + "/namespaces/default/workflows?query="
        + java.net.URLEncoder.encode("OrderStatus=\"PAID\" AND WorkflowId=\"" + workflowId + "\"", StandardCharsets.UTF_8);
    try (HeadlessChromium browser = HeadlessChromium.start(1600, 1000)) {
      browser.open(url);
      browser.awaitText(t -> t.contains(workflowId), 90_000, 15_000);
      Thread.sleep(1_500); // the table settles after the text
      // a row links to the workflow's page; the filter alone would show the id in the text too
      boolean listed = browser.links("/workflows/").stream()
          .anyMatch(href -> java.net.URLDecoder.decode(href, StandardCharsets.UTF_8).contains("/workflows/" + workflowId + "/"));
      ev.check(listed, "the Web UI server lists " + workflowId + " under OrderStatus=\"PAID\" (a row links to it)");
    }
  }

  /** The real CLI against the cluster; its output (stdout and stderr). */
  private static String cli(Cluster cluster, String... args) throws Exception {
    List<String> cmd = cluster.cliCommand(args);
    Path out = Files.createTempFile("x30-cli-", ".out");
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("the CLI did not answer within 30 s: " + cmd);
      }
      return Files.readString(out);
    } finally {
      Files.deleteIfExists(out);
    }
  }

}
