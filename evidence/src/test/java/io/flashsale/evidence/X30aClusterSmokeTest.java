package io.flashsale.evidence;

import io.flashsale.devstack.cluster.Cluster;
import io.flashsale.launcher.cli.HttpJson;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
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
 */
@Tag("dev-server-only")
class X30aClusterSmokeTest {
  private static final Path HOME = Path.of("..").toAbsolutePath().normalize();
  @RegisterExtension static final Evidence ev = new Evidence("X-30a",
      "production shape: Temporal server on PostgreSQL, SQL visibility, one order PAID");

  @TempDir Path data;

  @Test
  void oneOrderIsPaidOnTheTemporalServerOverPostgres() throws Exception {
    Cluster.Binaries bin = Cluster.Binaries.find(HOME); // throws with the install command when one is missing
    long t0 = System.nanoTime();
    try (Cluster cluster = Cluster.start(new Cluster.Settings(HOME, data, 0, 0, 0, 0, true), ev::note)) {
      ev.note(String.format("cluster started in %.1f s (Temporal %s, Web UI %s, API %s)",
          (System.nanoTime() - t0) / 1e9, cluster.temporalAddress(), cluster.webUi(), cluster.api()));

      HttpJson buyer = new HttpJson(cluster.api(), null).login("t1", "user-x30a");
      HttpJson.Reply created = Buyers.create(buyer, "x30a-1", "sku-lab-01", 1);
      ev.equal(201, created.status(), "the order is created through the API: " + created.raw());
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
        listed = run(List.of(bin.cli().toString(), "workflow", "list", "--address", cluster.temporalAddress(),
            "--query", "OrderStatus=\"PAID\""));
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
    }
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

  private static String run(List<String> command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(15, TimeUnit.SECONDS)) p.destroyForcibly();
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
  }
}
