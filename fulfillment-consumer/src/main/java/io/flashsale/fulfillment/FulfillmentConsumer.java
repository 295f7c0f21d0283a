package io.flashsale.fulfillment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.dropwizard.lifecycle.Managed;
import io.flashsale.domain.EventDelivery;
import io.flashsale.domain.Shipments;
import io.flashsale.persistence.Database;
import io.flashsale.problem.Problem;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The downstream fulfillment service: receives order events over HTTP on its own port, with its
 * own pool and schema. Only a relay's delivery is read: JSON, signed with the delivery secret
 * ({@link EventDelivery}); anything else is refused and changes nothing. Dedup by event id
 * (DUPLICATE), a per-order version guard (STALE), every arrival logged; an ORDER_PAID that
 * applies ships the order once. Its shipments are offered to reconciliation through {@link Shipments}.
 */
public final class FulfillmentConsumer implements Managed, Shipments {
  private static final Logger log = LoggerFactory.getLogger(FulfillmentConsumer.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  public static final String SCHEMA = "fulfillment";

  /**
   * The consumer's idempotency, one safeguard: the inbox (dedup by event id) and the version guard
   * together. Only the negative control C29-18 switches it off, through this instance; no
   * configuration key, command or endpoint reaches it.
   */
  private volatile boolean idempotent = true;

  private final Database db;
  private final String host;
  private final int port;
  private final EventDelivery deliveries;
  private HttpServer server;
  private java.util.concurrent.ExecutorService handlers;

  /** A largest event body: an event is a few hundred bytes; a larger one is refused unread. */
  static final int MAX_BODY_BYTES = 64 * 1024;
  private static final Problem TOO_LARGE = Problem.of(413, "BODY_TOO_LARGE", "an event is at most " + MAX_BODY_BYTES + " bytes");

  /** @param deliverySecret the secret its relays sign each delivery with */
  public FulfillmentConsumer(Database db, String host, int port, String deliverySecret) {
    this.deliveries = new EventDelivery(deliverySecret);
    this.db = db;
    this.host = host;
    this.port = port;
  }

  /** JDBC url of the consumer's own access path: same server, its own schema. */
  public static String jdbcUrl(String ordersUrl) {
    return ordersUrl + (ordersUrl.contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA;
  }

  public void migrate() {
    db.migrate("classpath:db/fulfillment", SCHEMA);
  }

  public String url() {
    return "http://" + host + ":" + port + "/events";
  }

  /** Negative control C29-18 only: events are applied without the inbox and without the version guard. */
  public void switchOffIdempotency() {
    idempotent = false;
  }

  /** Puts the idempotency back (after a negative control). */
  public void restoreIdempotency() {
    idempotent = true;
  }

  @Override
  public Map<String, Integer> shipCounts() {
    return db.read(c -> {
      Map<String, Integer> out = new TreeMap<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT order_id, ship_count FROM fulfillment WHERE ship_count > 0");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.put(rs.getString(1), rs.getInt(2));
      }
      return out;
    });
  }

  /** Applies one event; returns APPLIED, DUPLICATE or STALE. */
  public String receive(long eventId, String orderId, String eventType, int orderVersion) {
    boolean dedup = idempotent;
    String effect = db.inTx(c -> {
      if (dedup) {
        try (PreparedStatement ps = c.prepareStatement(
            "INSERT INTO ful_inbox (event_id) VALUES (?) ON CONFLICT DO NOTHING")) {
          ps.setLong(1, eventId);
          if (ps.executeUpdate() == 0) return "DUPLICATE";
        }
      }
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO fulfillment (order_id, last_version, last_event, ship_count) VALUES (?, ?, ?, ?)"
              + " ON CONFLICT (order_id) DO UPDATE SET last_version = EXCLUDED.last_version,"
              + " last_event = EXCLUDED.last_event, ship_count = fulfillment.ship_count + EXCLUDED.ship_count"
              + (dedup ? " WHERE fulfillment.last_version < EXCLUDED.last_version" : ""))) {
        ps.setString(1, orderId);
        ps.setInt(2, orderVersion);
        ps.setString(3, eventType);
        ps.setInt(4, "ORDER_PAID".equals(eventType) ? 1 : 0);
        return ps.executeUpdate() == 0 ? "STALE" : "APPLIED";
      }
    });
    db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "INSERT INTO ful_received (event_id, order_id, effect) VALUES (?, ?, ?)")) {
        ps.setLong(1, eventId);
        ps.setString(2, orderId);
        ps.setString(3, effect);
        return ps.executeUpdate();
      }
    });
    try (var mdc = org.slf4j.MDC.putCloseable(io.flashsale.domain.LogKeys.ORDER_ID, orderId)) {
      log.info("order {} event {} {} v{} -> {}", orderId, eventId, eventType, orderVersion, effect);
    }
    return effect;
  }

  @Override
  public void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(host, port), 64);
    handlers = Executors.newFixedThreadPool(8, r -> {
      Thread t = new Thread(r, "fulfillment");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(handlers);
    server.createContext("/events", this::handle);
    server.start();
    log.info("fulfillment consumer at {}", url());
  }

  private void handle(HttpExchange ex) throws IOException {
    Reply r;
    try {
      r = answer(ex);
    } catch (IOException | RuntimeException e) {
      log.error("fulfillment event failed", e);
      r = e instanceof com.fasterxml.jackson.core.JsonProcessingException
          ? problem(Problem.of(400, "MALFORMED_JSON", "the request body is not valid JSON"))
          : problem(Problem.of(500, "INTERNAL", "internal error"));
    }
    ex.getResponseHeaders().set("Content-Type", r.contentType());
    if (r.status() == 405) ex.getResponseHeaders().set("Allow", "POST");
    ex.sendResponseHeaders(r.status(), r.body().length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(r.body());
    }
  }

  private record Reply(int status, byte[] body, String contentType) {}

  /** Only a relay's signed JSON delivery is read as an event; every refusal changes nothing. */
  private Reply answer(HttpExchange ex) throws IOException {
    if (!"POST".equals(ex.getRequestMethod())) {
      return problem(Problem.of(405, "METHOD_NOT_ALLOWED", "events are POSTed"));
    }
    if (!isJson(ex.getRequestHeaders().getFirst("Content-Type"))) {
      // a web page may POST text/plain without a preflight: only the relay's JSON is read
      return problem(Problem.of(415, "UNSUPPORTED_MEDIA_TYPE", "events are application/json"));
    }
    String length = ex.getRequestHeaders().getFirst("Content-Length");
    if (length != null && (length.length() > 9 || Long.parseLong(length.trim()) > MAX_BODY_BYTES)) {
      return problem(TOO_LARGE);
    }
    byte[] raw = ex.getRequestBody().readNBytes(MAX_BODY_BYTES + 1);
    if (raw.length > MAX_BODY_BYTES) {
      return problem(TOO_LARGE);
    }
    if (!deliveries.verifies(ex.getRequestHeaders().getFirst(EventDelivery.HEADER), raw)) {
      log.warn("fulfillment: a delivery without a valid {} refused ({} bytes from {})", EventDelivery.HEADER,
          raw.length, ex.getRemoteAddress());
      return problem(Problem.of(401, "BAD_SIGNATURE", "deliveries are signed by a relay (" + EventDelivery.HEADER + ")"));
    }
    JsonNode e = JSON.readTree(raw);
    // integers that fit the columns: a wider one would wrap around to another event id or version
    if (!e.path("event_id").isIntegralNumber() || !e.path("event_id").canConvertToLong()
        || !e.path("order_id").isTextual() || !e.path("event_type").isTextual()
        || !e.path("order_version").isIntegralNumber() || !e.path("order_version").canConvertToInt()) {
      return problem(Problem.of(400, "BAD_EVENT",
          "an event needs event_id and order_version (integers) and order_id and event_type (strings)"));
    }
    String effect = receive(e.path("event_id").asLong(), e.path("order_id").asText(),
        e.path("event_type").asText(), e.path("order_version").asInt());
    return new Reply(200, JSON.writeValueAsBytes(Map.of("effect", effect)), "application/json");
  }

  private static boolean isJson(String contentType) {
    if (contentType == null) return false;
    String type = contentType.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
    return type.equals("application/json");
  }

  /** An error answer: an RFC 9457 problem detail, like the API's. */
  private static Reply problem(Problem p) {
    return new Reply(p.status(), p.toJson(), Problem.MEDIA_TYPE);
  }

  @Override
  public void stop() throws InterruptedException {
    if (server != null) server.stop(1);
    if (handlers != null) {
      handlers.shutdown();
      handlers.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
    }
    db.close();
  }

  /** True once the consumer stopped: its handlers ended and its pool is closed. */
  public boolean isStopped() {
    return (handlers == null || handlers.isTerminated()) && db.isClosed();
  }
}
