package io.flashsale.evidence;

import io.flashsale.devstack.cluster.Cluster;
import io.flashsale.launcher.cli.HttpJson;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * X-30a: the production shape starts on one machine. ./flashsale cluster's launcher starts a
 * PostgreSQL, the Temporal server 1.29.1 (PostgreSQL persistence, SQL visibility), the Web UI
 * server and the service from the installed binaries (missing ones fail the test); one order is
 * created and paid through the API; the real CLI lists it by OrderStatus="PAID" (SQL visibility);
 * the server's own tables in PostgreSQL hold its execution and history.
 *
 * <p>The engine is no side door (docs/DESIGN.md §Trust boundaries): the frontend admits only the
 * deployment's certificates, so the CLI without one, over plaintext or TLS, and with a certificate
 * of another CA, is refused; with the operator's certificate, a forged CHARGED signal without the
 * operator's proof is recorded as REJECTED and leaves the order CREATED; the same notice proved
 * with the admin credential ({@code ./flashsale operator-notice}) makes it PAID, and reconciliation
 * names it.
 */
@Tag("dev-server-only")
class X30aClusterSmokeTest {
  private static final Path HOME = Path.of("..").toAbsolutePath().normalize();
  @RegisterExtension static final Evidence ev = new Evidence("X-30a",
      "production shape: Temporal server on PostgreSQL behind mutual TLS, SQL visibility, one order PAID;"
          + " the CLI without a certificate refused, a forged signal rejected, the operator's proved one applied");

  @TempDir Path data;

  @Test
  void oneOrderIsPaidOnTheTemporalServerOverPostgres() throws Exception {
    Cluster.Binaries bin = Cluster.Binaries.find(HOME); // throws with the install command when one is missing
    long t0 = System.nanoTime();
    try (Cluster cluster = Cluster.start(new Cluster.Settings(HOME, data, 0, 0, 0, 0, true), ev::note)) {
      ev.note(String.format("cluster started in %.1f s (Temporal %s, Web UI %s, API %s)",
          (System.nanoTime() - t0) / 1e9, cluster.temporalAddress(), cluster.webUi(), cluster.api()));

      HttpJson buyer = new HttpJson(cluster.api(), null).login("t1", "user-x30a");
      // the service's own create deadline (1.5 s) on a cold cluster: a 503 is sent again with the key
      HttpJson.Reply created = buyer.postUntilAnswered("/orders", Buyers.order("x30a-1", "sku-lab-01", 1), Duration.ofSeconds(60));
      ev.check(created.status() == 201 || created.status() == 200 && "REPLAY".equals(created.text("outcome")),
          "the order is created through the API (201, or 200 REPLAY to a retry after a 503): " + created.raw());
      String orderId = created.text("order_id");
      String workflowId = created.text("workflow_id");
      HttpJson.Reply paid = Buyers.pay(buyer, orderId);
      ev.note("pay " + orderId + " → " + paid.status() + " " + paid.raw());
      String status = "";
      for (long end = System.currentTimeMillis() + 30_000; System.currentTimeMillis() < end; Thread.sleep(200)) {
        status = buyer.get("/orders/" + orderId).text("status");
        if ("PAID".equals(status)) break;
      }
      ev.equal("PAID", status, "the order is PAID");

      String listed = "";
      for (long end = System.currentTimeMillis() + 20_000; System.currentTimeMillis() < end; Thread.sleep(500)) {
        listed = run(cluster.cliCommand("workflow", "list", "--query", "OrderStatus=\"PAID\"")).output();
        if (listed.contains(workflowId)) break;
      }
      ev.note("temporal workflow list --query 'OrderStatus=\"PAID\"':\n" + listed);
      ev.check(listed.contains(workflowId), "the real CLI lists " + workflowId + " by OrderStatus=\"PAID\" (SQL visibility)");

      try (Connection c = DriverManager.getConnection(cluster.temporalJdbcUrl("temporal"))) {
        long executions = count(c, "SELECT count(*) FROM executions WHERE workflow_id = ?", workflowId);
        long nodes = count(c, "SELECT count(*) FROM history_node h JOIN executions e ON h.tree_id = e.run_id"
            + " WHERE e.workflow_id = ?", workflowId);
        ev.note("Temporal's PostgreSQL, database temporal: executions rows " + executions + ", history_node rows "
            + nodes + " for " + workflowId);
        ev.equal(1L, executions, "one execution row of the order's workflow in the server's PostgreSQL");
        ev.check(nodes > 0, "the order's history is stored in history_node");
      }
      try (Connection c = DriverManager.getConnection(cluster.temporalJdbcUrl("temporal_visibility"))) {
        ev.equal(1L, count(c, "SELECT count(*) FROM executions_visibility WHERE workflow_id = ?", workflowId),
            "one visibility row in temporal_visibility");
      }
      theEngineIsNoSideDoor(cluster, bin, buyer);
    }
  }

  private void theEngineIsNoSideDoor(Cluster cluster, Cluster.Binaries bin, HttpJson buyer) throws Exception {
    String address = cluster.temporalAddress();
    String cliPath = bin.cli().toString();
    Cluster.Tls ours = cluster.tls();
    Cluster.Tls strangers = new Cluster.Tls(data.resolve("another-ca"));
    Run made = run(List.of("sh", HOME.resolve(Cluster.CERTS_SCRIPT).toString(), strangers.dir().toString()));
    ev.equal(0, made.exit(), "a stranger's CA and certificates made: " + made.output());
    Map<String, List<String>> refused = new LinkedHashMap<>();
    refused.put("plaintext, no certificate", List.of());
    refused.put("TLS, no certificate", List.of("--tls-ca-path", ours.ca().toString(), "--tls-server-name",
        Cluster.Tls.SERVER_NAME));
    refused.put("TLS, a certificate of another CA", List.of("--tls-cert-path", strangers.cert("operator").toString(),
        "--tls-key-path", strangers.key("operator").toString(), "--tls-ca-path", ours.ca().toString(),
        "--tls-server-name", Cluster.Tls.SERVER_NAME));
    for (Map.Entry<String, List<String>> attempt : refused.entrySet()) {
      List<String> cmd = new ArrayList<>(List.of(cliPath, "workflow", "list", "--address", address,
          "--command-timeout", "10s"));
      cmd.addAll(attempt.getValue());
      Run r = run(cmd);
      ev.note("temporal workflow list, " + attempt.getKey() + " → exit " + r.exit() + ": " + firstLine(r.output()));
      // the same frontend answers the operator's certificate just above and below: a refusal, not a server down
      ev.check(r.exit() != 0 && r.output().contains("failed reaching server"),
          "the frontend refuses the CLI with " + attempt.getKey());
    }

    // the operator's certificate passes the door; a payment notice still needs the operator's proof
    HttpJson.Reply created = buyer.postUntilAnswered("/orders", Buyers.order("x30a-forged", "sku-lab-01", 1),
        Duration.ofSeconds(60));
    ev.check(created.status() == 201 || created.status() == 200 && "REPLAY".equals(created.text("outcome")),
        "a second order: " + created.raw());
    String orderId = created.text("order_id");
    String workflowId = created.text("workflow_id");
    long amount = buyer.get("/orders/" + orderId).body().path("amount").asLong();
    String forged = "{\"notify_id\":\"forged-1\",\"kind\":\"CHARGED\",\"amount\":" + amount + "}";
    Run signalled = run(cluster.cliCommand("workflow", "signal", "--workflow-id", workflowId, "--name",
        "paymentNotification", "--input", forged));
    ev.equal(0, signalled.exit(), "with the operator's certificate a signal reaches the workflow: " + signalled.output());
    Path serviceLog = data.resolve("logs/service.log");
    boolean recorded = false;
    for (long end = System.currentTimeMillis() + 20_000; System.currentTimeMillis() < end && !recorded; Thread.sleep(250)) {
      recorded = Files.readAllLines(serviceLog).stream()
          .anyMatch(l -> l.contains(orderId) && l.contains("forged-1") && l.contains("without a valid operator proof"));
    }
    ev.check(recorded, "the forged CHARGED signal is recorded as REJECTED (no valid operator proof; service log)");
    ev.equal("CREATED", buyer.get("/orders/" + orderId).text("status"), "the forged signal changed nothing");

    String proof = io.flashsale.domain.OperatorProof.of(cluster.adminToken(), orderId, "ops-1", "CHARGED", amount, null);
    String proved = "{\"notify_id\":\"ops-1\",\"kind\":\"CHARGED\",\"amount\":" + amount
        + ",\"operator_proof\":\"" + proof + "\"}";
    ev.equal(0, run(cluster.cliCommand("workflow", "signal", "--workflow-id", workflowId, "--name",
        "paymentNotification", "--input", proved)).exit(), "the operator's proved notice is signalled");
    String status = "";
    for (long end = System.currentTimeMillis() + 20_000; System.currentTimeMillis() < end; Thread.sleep(200)) {
      status = buyer.get("/orders/" + orderId).text("status");
      if ("PAID".equals(status)) break;
    }
    ev.equal("PAID", status, "the operator's notice, proved with the admin credential, makes the order PAID");
    String report = new HttpJson(cluster.admin(), cluster.adminToken()).post("/tasks/reconcile", null).raw();
    String settled = report.lines().filter(l -> l.startsWith("settled by an operator signal")).findFirst()
        .orElse("(no such line in the report: " + report.strip() + ")");
    ev.note(settled);
    ev.check(settled.contains(orderId + " by ops-1 PAID"), "reconciliation names the order the operator settled");
  }

  private static String firstLine(String text) {
    return text.strip().lines().findFirst().orElse("");
  }

  private static long count(Connection c, String sql, String arg) throws Exception {
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, arg);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getLong(1);
      }
    }
  }

  record Run(int exit, String output) {}

  private static Run run(List<String> command) throws Exception {
    Path out = Files.createTempFile("x30a-", ".out");
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("did not finish within 30 s: " + command);
      }
      return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
    }
  }
}
