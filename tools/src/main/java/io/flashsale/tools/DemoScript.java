package io.flashsale.tools;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.launcher.cli.HttpJson;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A short flash sale: eight buyers, five units; the channel declines one payment, sends
 * duplicate callbacks for another, loses one reply and holds one request. Waits until every order
 * has converged and prints the table and the reconciliation.
 */
public final class DemoScript {
  private static final String TENANT = "t1";
  private static final String SKU = "sku-demo";

  private final HttpJson api;
  private final HttpJson admin;
  private final HttpJson channel;
  private final PrintStream out;

  public DemoScript(String apiUrl, String adminUrl, String channelUrl, PrintStream out) {
    this.api = new HttpJson(apiUrl, null);
    this.admin = new HttpJson(adminUrl, null);
    this.channel = new HttpJson(channelUrl, null);
    this.out = out;
  }

  private record Buyer(String subject, String fault, Map<String, Object> rule) {}

  public boolean run() throws Exception {
    admin.post("/tasks/sku?tenant=" + TENANT + "&sku=" + SKU + "&total=5&unit_price=1990&per_user_limit=1", null);
    String run = Long.toString(System.currentTimeMillis() % 100000);
    List<Buyer> buyers = List.of(
        new Buyer("buyer-1", "3 duplicate callbacks", Map.of("callback_copies", 3)),
        new Buyer("buyer-2", "declined", Map.of("decline", true)),
        new Buyer("buyer-3", "reply lost (1200 ms)", Map.of("reply_delay_ms", 1200)),
        new Buyer("buyer-4", "request held 1500 ms", Map.of("hold_request_ms", 1500)),
        new Buyer("buyer-5", "none", Map.of()),
        new Buyer("buyer-6", "none", Map.of()),
        new Buyer("buyer-7", "none", Map.of()),
        new Buyer("buyer-8", "none", Map.of()));
    out.println("demo: 8 buyers, 5 units of " + TENANT + "/" + SKU + "; the four buyers with channel faults come"
        + " first, the other four race for the last unit\n");
    ExecutorService pool = Executors.newFixedThreadPool(buyers.size());
    List<String[]> table = new ArrayList<>();
    for (List<Buyer> wave : List.of(buyers.subList(0, 4), buyers.subList(4, 8))) {
      List<Future<String[]>> rows = new ArrayList<>();
      for (Buyer b : wave) rows.add(pool.submit(() -> buy(b, "demo-" + run)));
      for (Future<String[]> f : rows) table.add(f.get());
    }
    pool.shutdown();

    out.println("waiting for every order to converge ...");
    long deadline = System.currentTimeMillis() + 60_000;
    while (System.currentTimeMillis() < deadline) {
      String report = admin.post("/tasks/reconcile", null).raw();
      if (converged(report)) break;
      Thread.sleep(500);
    }
    out.println();
    out.println(row("buyer", "fault", "create", "order", "pay", "final / timeline"));
    for (String[] r : table) {
      String last = "";
      if (r[3] != null) {
        HttpJson.Reply o = api.as(r[5]).get("/orders/" + r[3]);
        last = o.text("status") + timeline(o.body());
      }
      out.println(row(r[0], r[1], r[2], r[3], r[4], last));
    }
    String report = admin.post("/tasks/reconcile", null).raw();
    out.println();
    out.print(report);
    return clean(report);
  }

  /** The reconciliation report's summary counts no order still in flight. */
  static boolean converged(String reconcileReport) {
    return reconcileReport.contains(" pending=0 ");
  }

  /** Converged, and the reconciliation found nothing wrong: the demo's exit status. */
  static boolean clean(String reconcileReport) {
    return reconcileReport.contains(" mismatches=0 ") && converged(reconcileReport);
  }

  /** One line of the result table; a missing order or pay answer shows as "-". */
  static String row(String buyer, String fault, String create, String order, String pay, String last) {
    return String.format("%-8s %-22s %-9s %-9s %-10s %s", buyer, fault, create, order == null ? "-" : order,
        pay == null ? "-" : pay, last);
  }

  /** An order body's timeline as " [from->to vN cause]" per transition, "-" before the first status. */
  static String timeline(JsonNode order) {
    StringBuilder sb = new StringBuilder();
    order.path("timeline").forEach(t -> sb.append(" [").append(t.path("from_status").asText("-"))
        .append("->").append(t.path("to_status").asText()).append(" v").append(t.path("version").asInt())
        .append(' ').append(t.path("cause").asText()).append(']'));
    return sb.toString();
  }

  private String[] buy(Buyer b, String keyPrefix) {
    HttpJson me = api.login(TENANT, b.subject());
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("request_key", keyPrefix + "-" + b.subject());
    body.put("sku", SKU);
    body.put("quantity", 1);
    HttpJson.Reply created = me.postUntilAnswered("/orders", body, java.time.Duration.ofSeconds(30));
    String outcome = created.text("outcome");
    String orderId = created.text("order_id");
    String pay = null;
    if (orderId != null && "CREATED".equals(outcome)) {
      if (!b.rule().isEmpty()) {
        Map<String, Object> rule = new LinkedHashMap<>(b.rule());
        rule.put("merchant_order", orderId);
        channel.post("/_faults", rule);
      }
      pay = me.post("/orders/" + orderId + "/pay", null).text("status");
    }
    return new String[] {b.subject(), b.fault(), outcome, orderId, pay, me.token()};
  }
}
