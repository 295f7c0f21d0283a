package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * an operator finds an order in the dev server's Web UI, opened in a real headless
 * Chromium. Three orders (PAID, UNKNOWN after a lost reply, CREATED); the workflow list filtered
 * by the OrderStatus search attribute shows only the UNKNOWN one, the PAID filter only the PAID
 * one, the unfiltered list all three; the UNKNOWN workflow's page (reached from its id alone)
 * shows its static summary, its charge's summary in the event history ("charge ord-… 1990") and
 * its current details (order id, UNKNOWN, version, last effect).
 * Screenshots go to target/webui with a manifest naming the run; ./flashsale evidence publishes them to evidence/webui/. Then the held callback is released, the CREATED order
 * cancelled, and reconcile is clean.
 */
@Tag("dev-server-only")
class X10WebUiTest {
  // the charge must time out (a reply delayed past it): the short channel deadline, not the stack's 5 s
  @RegisterExtension static final Stack stack = new Stack().shortChannelDeadline().with("orders.unknownFirstQuery", "10m");
  @RegisterExtension static final Evidence ev = new Evidence("X-10", "Web UI in headless Chromium: find the UNKNOWN order");

  private static final String SKU = "sku-x10";
  /**
   * target/webui (a test run leaves the tree clean), with manifest.txt; evidence/summary.sh
   * publishes it to evidence/webui/, the committed screenshots the README shows, when the manifest
   * names the run it summarises.
   */
  private static final Path SHOTS = Path.of(System.getProperty("evidence.webui.dir", "target/webui")).normalize();
  private static final Pattern WORKFLOW_LINK =
      Pattern.compile("/namespaces/default/workflows/([^/?#]+)/([^/?#]+)/history");

  @Test
  void webUiFiltersByOrderStatusAndShowsTheOrder() throws Exception {
    String missing = HeadlessChromium.missing();
    ev.check(missing == null, missing == null ? "headless Chromium and chromedriver installed" : missing);
    ev.check(stack.devServer(), "runs on the dev server (its Web UI)");
    RunStamp.emptyFolder(SHOTS);

    stack.sku(SKU, 10, 3);
    HttpJson payer = stack.api.login("t1", "user-1001");
    HttpJson waiter = stack.api.login("t1", "user-1002");
    HttpJson idler = stack.api.login("t1", "user-1003");

    String paid = Buyers.create(payer, "x10-paid", SKU, 1).text("order_id");
    ev.equal("PAID", Buyers.pay(payer, paid).text("status"), "first order paid: PAID");
    String unknown = Buyers.create(waiter, "x10-unknown", SKU, 1).text("order_id");
    Buyers.fault(stack.channel, unknown, Map.of("reply_delay_ms", Stack.LATE_REPLY_MS, "hold_callbacks", true));
    ev.equal("UNKNOWN", Buyers.pay(waiter, unknown).text("status"), "second order: a lost reply leaves it UNKNOWN");
    String created = Buyers.create(idler, "x10-created", SKU, 1).text("order_id");
    ev.equal("CREATED", stack.sql.text("SELECT status FROM orders WHERE order_id = ?", created), "third order CREATED");

    String paidWf = workflowId(paid);
    String unknownWf = workflowId(unknown);
    String createdWf = workflowId(created);
    ev.note("orders: PAID " + paid + " (" + paidWf + "), UNKNOWN " + unknown + " (" + unknownWf + "), CREATED "
        + created + " (" + createdWf + ")");

    // visibility is eventually consistent: the UI can only list what the CLI's listing already has
    ev.check(listedBy("OrderStatus=\"UNKNOWN\"", unknownWf), "visibility lists the UNKNOWN order by OrderStatus");
    ev.check(listedBy("OrderStatus=\"PAID\"", paidWf), "visibility lists the PAID order by OrderStatus");
    ev.check(listedBy("OrderStatus=\"CREATED\"", createdWf), "visibility lists the CREATED order by OrderStatus");

    long started = System.currentTimeMillis();
    try (HeadlessChromium browser = HeadlessChromium.start(1600, 1000)) {
      ev.note("browser " + browser.version() + " started in " + (System.currentTimeMillis() - started) + " ms");

      // 1. the list filtered by OrderStatus="UNKNOWN"
      String unknownUrl = listUrl("OrderStatus=\"UNKNOWN\"");
      Set<String> seen = openList(browser, unknownUrl, unknownWf);
      ev.note("opened " + unknownUrl + " → workflow ids listed " + seen);
      browser.screenshot(SHOTS.resolve("x10-unknown-filter.png"));
      ev.note("screenshot " + RunStamp.shown(SHOTS.resolve("x10-unknown-filter.png")));
      String text = browser.text();
      ev.equal(Set.of(unknownWf), seen, "the OrderStatus=\"UNKNOWN\" list links exactly the UNKNOWN order's workflow");
      ev.check(text.contains(unknownWf), "the filtered page shows the UNKNOWN workflow id " + unknownWf);
      ev.check(!text.contains(paidWf), "the filtered page does not show the PAID workflow " + paidWf);
      ev.check(!text.contains(createdWf), "the filtered page does not show the CREATED workflow " + createdWf);
      ev.check(text.contains("OrderStatus"), "the filtered page shows the OrderStatus filter");

      // 2. the list filtered by OrderStatus="PAID"
      String paidUrl = listUrl("OrderStatus=\"PAID\"");
      Set<String> seenPaid = openList(browser, paidUrl, paidWf);
      ev.note("opened " + paidUrl + " → workflow ids listed " + seenPaid);
      ev.equal(Set.of(paidWf), seenPaid, "the OrderStatus=\"PAID\" list links exactly the PAID order's workflow");

      // 3. the unfiltered list: all three
      String allUrl = stack.webUi() + "/namespaces/default/workflows";
      browser.open(allUrl);
      String all = browser.awaitText(t -> t.contains(paidWf) && t.contains(unknownWf) && t.contains(createdWf),
          90_000, 15_000);
      Set<String> seenAll = listed(browser);
      ev.note("opened " + allUrl + " → workflow ids listed " + seenAll);
      ev.check(all.contains(paidWf) && all.contains(unknownWf) && all.contains(createdWf),
          "the unfiltered list shows all three orders, the PAID one among them");

      // 4. the UNKNOWN order's page from its workflow id alone: the UI redirects to the run's history
      String byId = stack.webUi() + "/namespaces/default/workflows/" + pathSegment(unknownWf);
      browser.open(byId);
      String runId = null;
      long deadline = System.currentTimeMillis() + 90_000;
      String at = "";
      while (System.currentTimeMillis() < deadline) {
        at = browser.currentUrl();
        Matcher m = WORKFLOW_LINK.matcher(at);
        if (m.find()) {
          runId = m.group(2);
          break;
        }
        Thread.sleep(300);
      }
      ev.note("opened " + byId + " → redirected to " + at);
      ev.check(runId != null, "the workflow id alone leads to the latest run's history page");
      String summary = "order " + SKU + " x1 for t1/user-1002";
      String history = browser.awaitText(t -> t.contains(unknownWf) && t.contains(summary), 90_000, 15_000);
      ev.check(history.contains(unknownWf) && history.contains(runId), "the history page shows workflow id and run id");
      ev.check(history.contains(summary), "the history page shows the static summary \"" + summary + "\"");
      ev.check(history.contains("Running"), "the UNKNOWN order's workflow is Running");

      // 4b. its event history names what each step is for: the charge's summary, not a bare
      // activity type (docs/DESIGN.md §Readable histories)
      String chargeSummary = "charge " + unknown + " 1990";
      String steps = browser.awaitText(t -> t.contains(chargeSummary), 90_000, 15_000);
      browser.screenshot(SHOTS.resolve("x10-history-summaries.png"));
      ev.note("history page; screenshot " + RunStamp.shown(SHOTS.resolve("x10-history-summaries.png"))
          + "; lines naming the order: " + line(steps, unknown));
      ev.check(steps.contains(chargeSummary), "the history page shows the charge's summary \"" + chargeSummary + "\"");

      // 5. its User Metadata tab: summary and the current details the workflow set (answered by our worker)
      String detailUrl = stack.webUi() + "/namespaces/default/workflows/" + pathSegment(unknownWf) + "/" + runId
          + "/user-metadata";
      String current = unknown + " UNKNOWN v";
      browser.open(detailUrl);
      String detail = browser.awaitText(t -> t.contains(summary) && t.contains(current), 90_000, 15_000);
      browser.screenshot(SHOTS.resolve("x10-order-detail.png"));
      ev.note("opened " + detailUrl + "; screenshot " + RunStamp.shown(SHOTS.resolve("x10-order-detail.png")));
      RunStamp.writeManifest(SHOTS, "X-10",
          List.of("x10-unknown-filter.png", "x10-history-summaries.png", "x10-order-detail.png"));
      ev.note("current details shown: " + line(detail, current));
      ev.check(detail.contains(summary), "the order page shows the summary \"" + summary + "\"");
      ev.check(detail.contains(current) && detail.contains("last effect:"),
          "the order page shows the current details: order id " + unknown + ", status UNKNOWN, version, last effect");
      ev.check(!detail.contains(paid + " ") && !detail.contains(created + " "), "and no other order's details");
      ev.note("browser part took " + (System.currentTimeMillis() - started) + " ms");
    }

    // settle: the held callback makes the UNKNOWN order PAID, the CREATED order is cancelled
    stack.channel.post("/_callbacks/release", Map.of("merchant_order", unknown, "order", "fifo"));
    stack.awaitStatus(unknown, "PAID", 30_000);
    ev.note("timeline " + unknown + ": " + stack.sql.timeline(unknown));
    ev.equal(200, Buyers.cancel(idler, created).status(), "the CREATED order is cancelled");
    stack.awaitStatus(created, "CANCELLED", 30_000);
    stack.awaitNoticesApplied(2, 30_000);
    ev.equal(1, Buyers.chargeRequests(stack.channel, unknown), "one charge request for the UNKNOWN order");
    stack.checkReconcileClean(ev, "reconcile clean");
  }

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  private static String listUrl(String query) {
    return stack.webUi() + "/namespaces/default/workflows?query=" + URLEncoder.encode(query, StandardCharsets.UTF_8);
  }

  /** A workflow id as one path segment (ids hold colons; the UI's own links encode them so). */
  private static String pathSegment(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Polls the CLI's listing for the query until it has the workflow. */
  private static boolean listedBy(String query, String workflowId) throws InterruptedException {
    String[] out = {""};
    boolean found = stack.within(() -> {
      try {
        out[0] = TemporalCliProcess.run(stack, "workflow", "list", "--query", query).output();
        return out[0].contains(workflowId);
      } catch (Exception e) {
        return false;
      }
    }, 60_000);
    ev.note("temporal workflow list --query '" + query + "':\n" + out[0]);
    return found;
  }

  /**
   * Opens a list URL, waits until the expected workflow is shown, lets the table settle and
   * answers the workflow ids the page links to.
   */
  private static Set<String> openList(HeadlessChromium browser, String url, String expected) throws Exception {
    browser.open(url);
    browser.awaitText(t -> t.contains(expected), 90_000, 15_000);
    Thread.sleep(1_500);
    return listed(browser);
  }

  /** The workflow ids of the rows: links to /workflows/&lt;id&gt;/&lt;run&gt;/history, decoded. */
  private static Set<String> listed(HeadlessChromium browser) throws Exception {
    Set<String> ids = new LinkedHashSet<>();
    for (String href : browser.links("/workflows/")) {
      Matcher m = WORKFLOW_LINK.matcher(href);
      if (m.find()) ids.add(URLDecoder.decode(m.group(1), StandardCharsets.UTF_8));
    }
    return ids;
  }

  private static String line(String text, String fragment) {
    List<String> hits = new ArrayList<>();
    for (String l : text.split("\n")) {
      if (l.contains(fragment)) hits.add(l.trim());
    }
    return String.join(" | ", hits);
  }
}
