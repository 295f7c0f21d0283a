package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-08: GET /orders/export.csv streams only the caller's orders, row by row from a database
 * cursor. A client that aborts mid-download frees what the export held: the open-export gauge goes
 * back to 0 and its PostgreSQL session leaves the query. (The 20 000 extra rows of the owner are
 * inserted directly, as export volume; they are not orders that went through the workflow.)
 */
@Tag("engine-independent") // its claim is about the API's CSV export, the same on either engine
class Cap08CsvExportTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("CAP-08", "CSV export streams; an aborted download frees its resources");

  @Test
  void exportStreamsAndAbortFreesResources() throws Exception {
    stack.sku("sku-cap08", 10, 3);
    HttpJson owner = stack.api.login("t1", "user-cap08");
    HttpJson other = stack.api.login("t1", "user-cap08b");
    Buyers.create(owner, "cap08-1", "sku-cap08", 1);
    Buyers.create(owner, "cap08-2", "sku-cap08", 1);
    Buyers.create(other, "cap08-3", "sku-cap08", 1);

    HttpJson.Reply mine = owner.get("/orders/export.csv");
    ev.equal(200, mine.status(), "export answers 200");
    String[] lines = mine.raw().split("\n");
    ev.equal("order_id,status,version,sku,quantity,amount,request_key,created_at", lines[0], "CSV header");
    ev.equal(3, lines.length, "header + the owner's 2 orders");
    ev.check(lines[1].matches("\"ord-\\d+\",\"CREATED\",1,\"sku-cap08\",1,1990,\"cap08-1\",\"[^\"]+\""),
        "every text field quoted, numbers bare: " + lines[1]);
    ev.check(!mine.raw().contains("cap08-3"), "another subject's order is not in the export");
    ev.equal(401, stack.api.get("/orders/export.csv").status(), "no token → 401");

    stack.db().read(c -> c.createStatement().executeUpdate(
        "INSERT INTO orders (order_id, tenant, subject, request_key, payload, sku, quantity, amount, status, version,"
            + " reservation_key, workflow_id) SELECT 'ord-9' || lpad(g::text, 6, '0'), 't1', 'user-cap08',"
            + " 'bulk-' || g, 'bulk', 'sku-cap08', 1, 1990, 'CANCELLED', 2, 'none', 'none'"
            + " FROM generate_series(1, 20000) g"));
    HttpJson.Reply all = owner.get("/orders/export.csv");
    ev.equal(20_003L, all.raw().lines().count(), "a full download of 20 002 orders + header");

    try (Socket s = new Socket("127.0.0.1", stack.wiring.apiPort())) {
      OutputStream out = s.getOutputStream();
      out.write(("GET /orders/export.csv HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer " + owner.token()
          + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] first = in.readNBytes(4096);
      ev.check(new String(first, StandardCharsets.US_ASCII).startsWith("HTTP/1.1 200"), "the download started");
      stack.awaitTrue(() -> openExports() == 1, 10_000, "export not open");
      ev.note("while the client stalls: open exports " + openExports() + ", export sessions " + exportSessions());
      ev.check(exportSessions() == 1, "the export holds one database session while streaming");
    } // the client goes away mid-download
    boolean freed = stack.within(() -> openExports() == 0 && exportSessions() == 0, 20_000);
    ev.note("after the abort: open exports " + openExports() + ", export sessions " + exportSessions());
    ev.check(freed, "aborted download: gauge back to 0, the cursor's session released");
    ev.equal(20_003L, owner.get("/orders/export.csv").raw().lines().count(), "the next export works");
  }

  private static int openExports() {
    return stack.admin.get("/metrics").body().path("gauges").path("flashsale.exports.open").path("value").asInt(-1);
  }

  private static long exportSessions() {
    return stack.sql.count("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT o.order_id%ORDER BY o.seq'"
        + " AND state <> 'idle'");
  }
}
