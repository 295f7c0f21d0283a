package io.flashsale.tools.bench;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PostgreSQL's own load tool on the admission transaction: the script holds the statements
 * OrderActivitiesImpl.reserve, Inventory.take/hold and OrderTransitions.insertCreated run, in
 * their order. Two differences, both forced by pgbench: the constants (tenant, SKU, price, TTL)
 * are literals rather than bound parameters, and the sold-out / over-limit branch is absent (the
 * stock never runs out, so the production code would never take it either).
 */
public final class Pgbench {
  private static final Pattern TPS = Pattern.compile("^tps = ([0-9.]+) \\(without initial connection time\\)", Pattern.MULTILINE);
  private static final Pattern PROCESSED = Pattern.compile("^number of transactions actually processed: (\\d+)", Pattern.MULTILINE);
  private static final Pattern FAILED = Pattern.compile("^number of failed transactions: (\\d+)", Pattern.MULTILINE);
  private static final Pattern LATENCY = Pattern.compile("^latency average = ([0-9.]+) ms", Pattern.MULTILINE);

  /** Where pgbench connects, from a JDBC URL (jdbc:postgresql://host:port/db?user=..&amp;password=..). */
  public record Target(String host, int port, String database, String user, String password) {
    public static Target of(String jdbcUrl, String defaultUser, String defaultPassword) {
      URI u = URI.create(jdbcUrl.substring("jdbc:".length()));
      Map<String, String> q = new LinkedHashMap<>();
      if (u.getRawQuery() != null) {
        for (String kv : u.getRawQuery().split("&")) {
          int eq = kv.indexOf('=');
          if (eq > 0) q.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
        }
      }
      String db = u.getPath() == null || u.getPath().length() <= 1 ? "postgres" : u.getPath().substring(1);
      return new Target(u.getHost(), u.getPort() < 0 ? 5432 : u.getPort(), db, q.getOrDefault("user", defaultUser),
          q.getOrDefault("password", defaultPassword));
    }
  }

  /** What pgbench printed at the end. */
  public record Summary(double tps, long processed, long failed, double latencyAverageMs) {}

  private Pgbench() {}

  /** One admission per transaction for a random one of {@code subjects} buyers, with a fresh request key. */
  public static String script(String tenant, String sku, String subjectPrefix, int subjects, long unitPrice,
      long reservationTtlMs) {
    String t = literal(tenant);
    String s = literal(sku);
    String subject = "(" + literal(subjectPrefix) + " || :buyer::text)";
    String key = "('pgb-' || :client_id::text || '-' || :k::text)";
    String orderId = orderIdExpression(":n");
    String reservationKey = "(" + orderId + " || '/r1')";
    String payload = literal("sku=" + sku + ";quantity=1;note=");
    return String.join("\n",
        "\\set buyer random(0, " + (subjects - 1) + ")",
        "\\set k random(1, 1000000000000000)",
        "BEGIN;",
        // OrderRow.byScope
        "SELECT order_id, tenant, subject, request_key, payload, sku, quantity, amount, status, version,"
            + " reservation_key, reserve_attempt, workflow_id FROM orders WHERE tenant = " + t + " AND subject = "
            + subject + " AND request_key = " + key + ";",
        // reserve: the SKU's price and limit, and the transaction's start (the answer's created_at)
        "SELECT unit_price, per_user_limit, now() FROM sku WHERE tenant = " + t + " AND sku = " + s + ";",
        // Inventory.take: the per-user sum (the buyers here are under their limit: no stock read), the
        // conditional decrement, the per-user sum under the row lock
        "SELECT coalesce(sum(quantity), 0) FROM reservation WHERE tenant = " + t + " AND sku = " + s
            + " AND subject = " + subject + " AND status IN ('HELD', 'CONFIRMED');",
        "UPDATE sku SET remaining = remaining - 1 WHERE tenant = " + t + " AND sku = " + s + " AND remaining >= 1;",
        "SELECT coalesce(sum(quantity), 0) FROM reservation WHERE tenant = " + t + " AND sku = " + s
            + " AND subject = " + subject + " AND status IN ('HELD', 'CONFIRMED');",
        // OrderIdIssuer.next (the key is read once per process, so no statement here)
        "SELECT nextval('order_number') AS n \\gset",
        // Inventory.hold
        "INSERT INTO reservation (reservation_key, tenant, sku, subject, quantity, status, expires_at) VALUES ("
            + reservationKey + ", " + t + ", " + s + ", " + subject + ", 1, 'HELD', now() + " + reservationTtlMs
            + " * interval '1 millisecond');",
        // OrderTransitions.insertCreated
        "INSERT INTO orders (order_id, tenant, subject, request_key, payload, sku, quantity, amount, note, status,"
            + " version, reservation_key, reserve_attempt, workflow_id, seq) VALUES (" + orderId + ", " + t + ", "
            + subject + ", " + key + ", " + payload + ", " + s + ", 1, " + unitPrice + ", NULL, 'CREATED', 1, "
            + reservationKey + ", 1, 'bench-pgbench', :n);",
        "INSERT INTO order_transition (order_id, from_status, to_status, version, cause) VALUES (" + orderId
            + ", NULL, 'CREATED', 1, 'create');",
        "COMMIT;",
        "");
  }

  /**
   * The order id of sequence number {@code n}: "ord-" and twelve digits, as the service's ids are
   * (API pattern {@code ^ord-[0-9]{4,12}$}), but the number itself, zero-padded, where the service
   * permutes it under the database's key (OrderIds, an HMAC computed in the service, not in the
   * database). Unique for every number below 10^12, like the service's; the database work per
   * create is the same: one nextval, then the inserts with the id and the number.
   */
  static String orderIdExpression(String n) {
    return "('ord-' || lpad(" + n + "::text, 12, '0'))";
  }

  /** pgbench's command line: no vacuum, prepared statements, clients as given, at most two threads. */
  public static List<String> command(Target target, String scriptFile, int clients, int seconds) {
    List<String> c = new ArrayList<>(List.of("pgbench", "-n", "-M", "prepared", "-T", String.valueOf(seconds),
        "-c", String.valueOf(clients), "-j", String.valueOf(Math.min(2, clients)), "-f", scriptFile,
        "-h", target.host(), "-p", String.valueOf(target.port()), "-U", target.user(), target.database()));
    return c;
  }

  /** The first distinct error lines pgbench printed (a client aborts on its first error), at most three. */
  public static String errors(String output) {
    List<String> lines = output.lines().map(String::strip)
        .filter(l -> l.contains("ERROR") || l.contains("aborted") || l.startsWith("pgbench: error"))
        .map(l -> l.replaceAll("^pgbench: error: client \\d+ ", "client "))
        .distinct().limit(3).toList();
    return lines.isEmpty() ? "no error line" : String.join(" | ", lines);
  }

  public static Summary parse(String output) {
    double tps = find(TPS, output).orElseThrow(() -> new IllegalArgumentException("no tps in pgbench output:\n" + output));
    return new Summary(tps, findLong(PROCESSED, output).orElse(-1), findLong(FAILED, output).orElse(0),
        find(LATENCY, output).orElse(Double.NaN));
  }

  private static OptionalDouble find(Pattern p, String text) {
    Matcher m = p.matcher(text);
    return m.find() ? OptionalDouble.of(Double.parseDouble(m.group(1))) : OptionalDouble.empty();
  }

  private static OptionalLong findLong(Pattern p, String text) {
    Matcher m = p.matcher(text);
    return m.find() ? OptionalLong.of(Long.parseLong(m.group(1))) : OptionalLong.empty();
  }

  private static String literal(String s) {
    return "'" + s.replace("'", "''") + "'";
  }
}
