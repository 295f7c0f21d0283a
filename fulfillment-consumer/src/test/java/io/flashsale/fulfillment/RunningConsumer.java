package io.flashsale.fulfillment;

import io.flashsale.domain.Shipments;
import io.flashsale.persistence.Database;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.BindException;
import java.net.ServerSocket;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * A {@link FulfillmentConsumer} serving HTTP on a local port, with its own pool on its own schema
 * of a real PostgreSQL, as the launcher wires it; and what its tables say. Also used by the
 * outbox relay's tests, which deliver to it.
 */
public final class RunningConsumer implements AutoCloseable {
  private static final String HOST = "127.0.0.1";
  private static final String USER = "postgres";
  /** The secret its relays sign deliveries with (the outbox relay's tests sign with it too). */
  public static final String DELIVERY_SECRET = "test-delivery-secret-0123456789abcdef";

  /** One arrival as ful_received records it. */
  public record Arrival(long eventId, String orderId, String effect) {}

  /** An order's row in the consumer's own fulfillment table. */
  public record Fulfillment(int lastVersion, String lastEvent, int shipCount) {}

  /** Row counts of the consumer's three tables. */
  public record Stored(long inbox, long fulfillment, long received) {}

  private final FulfillmentConsumer consumer;
  private final int port;
  /** A pool of the test's own, so the tables stay readable after the consumer stopped (and closed its pool). */
  private final Database inspect;
  private boolean stopped;

  private RunningConsumer(EmbeddedPostgres postgres, int port) throws IOException {
    String url = FulfillmentConsumer.jdbcUrl(postgres.getJdbcUrl(USER, "postgres"));
    this.port = port;
    this.consumer = new FulfillmentConsumer(new Database(url, USER, USER, 4), HOST, port, DELIVERY_SECRET);
    this.inspect = new Database(url, USER, USER, 2);
    try {
      consumer.migrate();
      consumer.start();
    } catch (IOException | RuntimeException e) {
      close(); // stopping a consumer that did not start closes its pool
      throw e;
    }
  }

  /** On a free port (picked again if another process takes it before the consumer binds it). */
  public static RunningConsumer start(EmbeddedPostgres postgres) throws IOException {
    for (int attempt = 1; ; attempt++) {
      try {
        return startOn(postgres, freePort());
      } catch (BindException taken) {
        if (attempt == 5) throw taken;
      }
    }
  }

  /** On a given port: a consumer coming back where its predecessor served. */
  public static RunningConsumer startOn(EmbeddedPostgres postgres, int port) throws IOException {
    return new RunningConsumer(postgres, port);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  public String url() {
    return consumer.url();
  }

  public int port() {
    return port;
  }

  /** The consumer goes down: its port refuses connections; its tables stay readable here. */
  public void stop() {
    if (stopped) return;
    stopped = true;
    try {
      consumer.stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    stop();
    inspect.close();
  }

  /** Every arrival, in the order the consumer recorded them. */
  public List<Arrival> arrivals() {
    return inspect.read(c -> {
      List<Arrival> out = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("SELECT event_id, order_id, effect FROM ful_received ORDER BY id");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.add(new Arrival(rs.getLong(1), rs.getString(2), rs.getString(3)));
      }
      return out;
    });
  }

  /** The effects of every arrival of each event, in arrival order, keyed by event id in arrival order. */
  public Map<Long, List<String>> effectsByEvent() {
    return arrivals().stream().collect(Collectors.groupingBy(Arrival::eventId, LinkedHashMap::new,
        Collectors.mapping(Arrival::effect, Collectors.toList())));
  }

  /** The consumer itself, as reconciliation sees it: the orders it shipped and how often. */
  public Shipments shipments() {
    return consumer;
  }

  /** The negative control's switch (C29-18): inbox and version guard off, until restored. */
  public void switchOffIdempotency() {
    consumer.switchOffIdempotency();
  }

  public void restoreIdempotency() {
    consumer.restoreIdempotency();
  }

  /** The order's fulfillment row, or null when no event of it was applied. */
  public Fulfillment fulfillment(String orderId) {
    return inspect.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT last_version, last_event, ship_count FROM fulfillment WHERE order_id = ?")) {
        ps.setString(1, orderId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? new Fulfillment(rs.getInt(1), rs.getString(2), rs.getInt(3)) : null;
        }
      }
    });
  }

  public Stored stored() {
    return inspect.read(c -> {
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT (SELECT count(*) FROM ful_inbox),"
          + " (SELECT count(*) FROM fulfillment), (SELECT count(*) FROM ful_received)")) {
        rs.next();
        return new Stored(rs.getLong(1), rs.getLong(2), rs.getLong(3));
      }
    });
  }

  /** Empties the consumer's tables, for a test that counts everything the consumer received. */
  public void forgetEverything() {
    execute("TRUNCATE ful_inbox, fulfillment, ful_received");
  }

  /** From now on the consumer's database fails these events (the consumer answers 500) until {@link #heal()}. */
  public void failEvents(long... eventIds) {
    String ids = LongStream.of(eventIds).mapToObj(Long::toString).collect(Collectors.joining(","));
    failWhen("NEW.event_id IN (" + ids + ")");
  }

  /** From now on the consumer's database fails every event until {@link #heal()}. */
  public void failEveryEvent() {
    failWhen("true");
  }

  public void heal() {
    execute("DROP TRIGGER IF EXISTS fail_event ON ful_inbox");
  }

  // a trigger on the dedup insert, the first write of every event: the transaction rolls back
  // whole and the consumer's error path answers 500, as for any database failure
  private void failWhen(String condition) {
    execute("CREATE OR REPLACE FUNCTION fail_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF " + condition
        + " THEN RAISE EXCEPTION 'fulfillment database fails event %', NEW.event_id; END IF; RETURN NEW; END $$");
    heal();
    execute("CREATE TRIGGER fail_event BEFORE INSERT ON ful_inbox FOR EACH ROW EXECUTE FUNCTION fail_event()");
  }

  private void execute(String sql) {
    inspect.read(c -> {
      try (Statement s = c.createStatement()) {
        return s.execute(sql);
      }
    });
  }
}
