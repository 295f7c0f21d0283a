package io.flashsale.persistence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which SKUs are sold out, in memory, for the API's sold-out gate: one per process, so a
 * flash-sale crowd hitting a sold-out SKU is answered without a read of the hot SKU row.
 *
 * <p>Fed by LISTEN on channel {@value #CHANNEL} (migration V3 notifies only when a SKU appears or
 * disappears or its sold-out state flips, never on an ordinary decrement) on a connection of its
 * own, outside the pool, and by a full read of every SKU's sold-out state every {@code refresh}
 * and at once after every (re)connect: the safety net for anything a notification did not say.
 * One daemon thread does both, so a full read and the notifications are applied in the order the
 * database sent them.
 *
 * <p>Bounded staleness: every entry carries when it was learned (the start of the full read that
 * saw it, or the arrival of its notification). {@link #answer} says SOLD_OUT only from an entry
 * learned within {@code bound}; an older entry is STALE, so with LISTEN or the full read broken
 * the gate falls through to the database after at most {@code bound}. A SKU not known, or known
 * as available, falls through as well: the view can only spare a read, never decide a sale (the
 * reserve transaction stays the authority).
 */
public final class StockView implements MemoryView {
  private static final Logger log = LoggerFactory.getLogger(StockView.class);
  public static final String CHANNEL = "sku_stock";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** What the view says about one SKU. */
  public enum Answer {
    /** Sold out, learned within the bound. */
    SOLD_OUT,
    /** Known and not sold out, learned within the bound. */
    AVAILABLE,
    /** Not in a full read within the bound, nor in a notification since. */
    NOT_KNOWN,
    /** Nothing learned within the bound (LISTEN or the full read broken, or not started yet). */
    STALE
  }

  /** Opens the view's own connection (not a pooled one: it LISTENs for the life of the process). */
  @FunctionalInterface
  public interface ConnectionSource {
    Connection open() throws SQLException;
  }

  private record Key(String tenant, String sku) {}

  /**
   * {@code soldOutSeenNanos}: for a sold-out entry, an instant by which the commit that sold the
   * SKU out was visible to any new snapshot (the arrival of its notification, or the end of the
   * full read that first saw it sold out); kept while the SKU stays sold out.
   */
  private record Entry(boolean soldOut, long learnedAtNanos, long soldOutSeenNanos) {
    static Entry of(boolean soldOut, long learnedAt, long seen, Entry before) {
      long since = !soldOut ? NOT_SOLD_OUT : before != null && before.soldOut() ? before.soldOutSeenNanos() : seen;
      return new Entry(soldOut, learnedAt, since);
    }
  }

  /** What {@link #soldOutSeenAt} answers for a SKU the view does not know as sold out. */
  public static final long NOT_SOLD_OUT = Long.MIN_VALUE;

  private final ConnectionSource connections;
  private final long refreshNanos;
  private final long boundNanos;
  private final long retryMillis;
  /** Replaced by every full read, changed in place by notifications; written by the view's thread only. */
  private volatile Map<Key, Entry> entries = new ConcurrentHashMap<>();
  /** When the last full read that succeeded started; Long.MIN_VALUE before the first. */
  private volatile long refreshedAtNanos = Long.MIN_VALUE;
  private volatile boolean listening;
  private volatile String lastError;
  private final AtomicLong notificationsApplied = new AtomicLong();
  private final AtomicLong refreshes = new AtomicLong();
  private final AtomicLong connectFailures = new AtomicLong();
  private volatile boolean closed;
  private volatile Connection current;
  private Thread thread;

  /**
   * @param refresh how often every SKU is read again (and the longest a lost notification goes unnoticed)
   * @param bound   the oldest state the view answers SOLD_OUT from; must exceed {@code refresh}
   */
  public StockView(ConnectionSource connections, Duration refresh, Duration bound) {
    if (refresh.toMillis() < 10) throw new IllegalArgumentException("refresh must be at least 10 ms, got " + refresh);
    if (bound.compareTo(refresh) <= 0) {
      throw new IllegalArgumentException("the sold-out bound (" + bound.toMillis() + " ms) must exceed the refresh interval ("
          + refresh.toMillis() + " ms), or every entry goes stale between two refreshes");
    }
    this.connections = connections;
    this.refreshNanos = refresh.toNanos();
    this.boundNanos = bound.toNanos();
    this.retryMillis = Math.min(1_000, refresh.toMillis());
  }

  /** A view on the pool's database, with a connection of its own. */
  public static StockView on(Database db, Duration refresh, Duration bound) {
    Properties props = MemoryView.connectionProperties("flashsale-stock-view", bound);
    return new StockView(() -> db.openUnpooled(props), refresh, bound);
  }

  /** Starts the view's thread; until its first full read every answer is STALE (the gate reads the database). */
  @Override
  public synchronized void start() {
    if (thread != null) throw new IllegalStateException("already started");
    thread = MemoryView.startThread(this::run, "stock-view");
  }

  @Override
  public void close() {
    closed = true;
    Thread t;
    synchronized (this) {
      t = thread;
    }
    MemoryView.stopThread(t, current); // closing the connection wakes a thread waiting for notifications
  }

  /** What the view knows about the SKU now; only SOLD_OUT may be acted on without the database. */
  public Answer answer(String tenant, String sku) {
    long now = System.nanoTime();
    Entry e = entries.get(new Key(tenant, sku));
    if (e != null) {
      if (now - e.learnedAtNanos() > boundNanos) return Answer.STALE;
      return e.soldOut() ? Answer.SOLD_OUT : Answer.AVAILABLE;
    }
    long refreshed = refreshedAtNanos;
    return refreshed == Long.MIN_VALUE || now - refreshed > boundNanos ? Answer.STALE : Answer.NOT_KNOWN;
  }

  /** True only when the SKU is known as sold out from state learned within the bound. */
  public boolean soldOut(String tenant, String sku) {
    return answer(tenant, sku) == Answer.SOLD_OUT;
  }

  /**
   * A {@link System#nanoTime} instant by which every order of the SKU was committed, as far as
   * this view can tell: the SKU sold out and stayed so since, so a read started after it sees
   * every order the SKU has. {@link #NOT_SOLD_OUT} unless {@link #soldOut} says so.
   */
  public long soldOutSeenAt(String tenant, String sku) {
    // the same test as answer() == SOLD_OUT, on one read of the entry
    Entry e = entries.get(new Key(tenant, sku));
    if (e == null || !e.soldOut() || System.nanoTime() - e.learnedAtNanos() > boundNanos) return NOT_SOLD_OUT;
    return e.soldOutSeenNanos();
  }

  /** Milliseconds since the last full read that succeeded started; -1 before the first. */
  @Override
  public long ageMillis() {
    long refreshed = refreshedAtNanos;
    return refreshed == Long.MIN_VALUE ? -1 : (System.nanoTime() - refreshed) / 1_000_000;
  }

  @Override
  public long boundMillis() {
    return boundNanos / 1_000_000;
  }

  @Override
  public Map<String, Object> details() {
    return Map.of("listening", listening(), "skus", size());
  }

  public boolean listening() {
    return listening;
  }

  public int size() {
    return entries.size();
  }

  public long notificationsApplied() {
    return notificationsApplied.get();
  }

  public long refreshes() {
    return refreshes.get();
  }

  /** Why the last connection or full read failed; null when none has. */
  public String lastError() {
    return lastError;
  }

  @Override
  public String describe() {
    long age = ageMillis();
    return (age < 0 ? "no full read yet" : "last full read " + age + " ms ago") + ", bound " + boundMillis() + " ms, "
        + size() + " SKUs, " + (listening ? "listening" : "not listening")
        + (fresh() ? "" : "; stale: the sold-out gate reads the database")
        + (lastError == null ? "" : "; last error: " + lastError);
  }

  // ---------------------------------------------------------------- the view's thread

  private void run() {
    boolean failing = false;
    // the first parse loads the JSON classes: here, not while a flip waits to be applied
    parse("{\"tenant\":\"\",\"sku\":\"\",\"remaining\":1}");
    while (!closed) {
      try (Connection c = connections.open()) {
        current = c;
        if (closed) break;
        c.setAutoCommit(true);
        try (Statement st = c.createStatement()) {
          st.execute("LISTEN " + CHANNEL);
        }
        PGConnection pg = c.unwrap(PGConnection.class);
        // listening before the first read: a flip committed after the read's snapshot is notified
        listening = true;
        // flips may have gone unnotified while disconnected: no sold-out instant is kept across the gap
        refresh(c, false);
        if (failing) log.info("stock view connected again: {}", describe());
        failing = false;
        long nextRefresh = System.nanoTime() + refreshNanos;
        while (!closed) {
          long waitMillis = Math.max(1, (nextRefresh - System.nanoTime()) / 1_000_000);
          // 0 would block without end: always at least 1 ms
          PGNotification[] received = pg.getNotifications((int) Math.min(waitMillis, Integer.MAX_VALUE));
          if (received != null) apply(received);
          if (System.nanoTime() - nextRefresh >= 0) {
            refresh(c, true);
            nextRefresh = System.nanoTime() + refreshNanos;
          }
        }
      } catch (SQLException | RuntimeException e) {
        listening = false;
        if (closed) break;
        lastError = e.toString();
        connectFailures.incrementAndGet();
        // one warning per outage; the entries go stale after the bound and the gate reads the database
        if (!failing) log.warn("stock view lost its connection (sold-out answers fall back to the database after {} ms): {}",
            boundMillis(), e.toString());
        failing = true;
        sleep(retryMillis);
      } finally {
        listening = false;
        current = null;
      }
    }
  }

  /** Every SKU's sold-out state as one snapshot; every entry is stamped with the read's start. */
  private void refresh(Connection c, boolean sameConnection) throws SQLException {
    long started = System.nanoTime();
    Map<Key, Entry> read = new java.util.HashMap<>();
    try (PreparedStatement ps = c.prepareStatement("SELECT tenant, sku, remaining = 0 FROM sku");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) read.put(new Key(rs.getString(1), rs.getString(2)), new Entry(rs.getBoolean(3), started, 0));
    }
    // the read's snapshot was taken before it ended: a commit it saw was visible by then
    long seen = System.nanoTime();
    Map<Key, Entry> before = sameConnection ? entries : Map.of();
    Map<Key, Entry> next = new ConcurrentHashMap<>();
    read.forEach((k, e) -> next.put(k, Entry.of(e.soldOut(), started, seen, before.get(k))));
    entries = next;
    refreshedAtNanos = started;
    refreshes.incrementAndGet();
  }

  private void apply(PGNotification[] received) {
    long now = System.nanoTime();
    Map<Key, Entry> current = entries;
    for (PGNotification n : received) {
      if (!CHANNEL.equals(n.getName())) continue;
      try {
        JsonNode p = parse(n.getParameter());
        Key key = new Key(p.path("tenant").asText(), p.path("sku").asText());
        JsonNode remaining = p.path("remaining");
        if (remaining.isNull() || remaining.isMissingNode()) {
          current.remove(key);
        } else {
          current.put(key, Entry.of(remaining.asInt() == 0, now, now, current.get(key)));
        }
        notificationsApplied.incrementAndGet();
      } catch (RuntimeException bad) {
        // the next full read corrects whatever this one would have said
        log.warn("stock view: unreadable notification {}: {}", n.getParameter(), bad.toString());
      }
    }
  }

  private static JsonNode parse(String payload) {
    try {
      return JSON.readTree(payload);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
