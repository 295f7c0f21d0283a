package io.flashsale.persistence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the API's create gate needs to know about a caller, in memory, one per process: its
 * standing (revoked, tokens refused up to an instant), and whether it has any order at all. A sold-out answer then makes no
 * database round trip: not the revocation read, not the read of the request key (a buyer without
 * any order cannot have an order under this key).
 *
 * <p>One daemon thread polls every {@code refresh} on a connection of its own: the principals
 * revoked in full (a small set) and those logged out within the longest token lifetime (older
 * logouts refuse only tokens that have expired since, so the set stays the recent ones), and the buyers of the orders that appeared since the last
 * poll. "Since" is exact, not a guess: before each read the poll takes the start of the oldest
 * transaction still open on the database ({@code pg_stat_activity.xact_start}); an order that was
 * not yet committed then carries {@code created_at = now()} of its transaction, so it is at or
 * after that horizon and the next poll, which reads from it, sees it. A poll that cannot see every
 * open transaction (a role without {@code pg_read_all_stats} next to sessions of another role)
 * learns nothing and the view goes stale.
 *
 * <p>Bounded staleness, as in {@link StockView}: every answer comes from a poll started within
 * {@code bound}; otherwise the view says it does not know and the caller reads the database. An
 * order committed after the last poll is not known yet, so {@link #hasNoOrder} also takes the
 * moment from which an order must be known (for a sold-out SKU, when its last unit's commit was
 * visible: every order of that SKU committed by then) and answers only from a poll started after
 * it. Revocations and orders made through this process are applied at once.
 * Docs: docs/DESIGN.md §Workflow design, "Caller view".
 */
public final class PrincipalView implements MemoryView {
  private static final Logger log = LoggerFactory.getLogger(PrincipalView.class);

  /** Past this many buyers (some 40 MB) the view stops answering "no order" (the key read stays) instead of growing. */
  public static final int DEFAULT_MAX_BUYERS = 200_000;

  /**
   * Read back before the horizon: a transaction's start time is taken when its first statement
   * arrives and shows in pg_stat_activity a moment later, and a clock may step back a little.
   */
  static final String HORIZON_MARGIN = "2 seconds";

  private record Principal(String tenant, String subject) {}

  private record Note(Principals.Standing standing, long atNanos) {}

  private final StockView.ConnectionSource connections;
  private final long refreshMillis;
  private final long boundNanos;
  private final int maxBuyers;
  private final long forgetEndedSessionsMillis;
  /** The principals whose standing is not {@link Principals.Standing#CLEAR}. */
  private volatile Map<Principal, Principals.Standing> standings = new ConcurrentHashMap<>();
  private final Set<Principal> buyers = ConcurrentHashMap.newKeySet();
  /** Standings noted by this process, kept over a poll that may have read before they committed. */
  private final java.util.Map<Principal, Note> notes = new ConcurrentHashMap<>();
  /** Orders the notes and the poll's swap of the revoked set, so neither loses the other's change. */
  private final Object revokedLock = new Object();
  /** The horizon the next poll reads orders from; null until the first full read. */
  private Timestamp horizon;
  /** When the last poll that succeeded started (its reads saw every commit before this); MIN before the first. */
  private volatile long polledAtNanos = Long.MIN_VALUE;
  private volatile boolean buyersOverflow;
  private volatile String lastError;
  private final AtomicLong polls = new AtomicLong();
  private volatile boolean closed;
  private volatile Connection current;
  private Thread thread;

  /**
   * @param refresh how often the view polls (the longest another process's revocation or order goes unseen)
   * @param bound   the oldest poll the view answers from; must exceed {@code refresh}
   */
  public PrincipalView(StockView.ConnectionSource connections, Duration refresh, Duration bound, int maxBuyers) {
    this(connections, refresh, bound, maxBuyers, Duration.ZERO);
  }

  /**
   * @param forgetEndedSessionsAfter a logout older than this is not polled (zero: every one is);
   *     longer than any token lives, so every token it refused has expired by then
   */
  public PrincipalView(StockView.ConnectionSource connections, Duration refresh, Duration bound, int maxBuyers,
      Duration forgetEndedSessionsAfter) {
    this.forgetEndedSessionsMillis = forgetEndedSessionsAfter.toMillis();
    if (refresh.toMillis() < 10) throw new IllegalArgumentException("refresh must be at least 10 ms, got " + refresh);
    if (bound.compareTo(refresh) <= 0) {
      throw new IllegalArgumentException("the caller view's bound (" + bound.toMillis() + " ms) must exceed its refresh ("
          + refresh.toMillis() + " ms)");
    }
    this.connections = connections;
    this.refreshMillis = refresh.toMillis();
    this.boundNanos = bound.toNanos();
    this.maxBuyers = maxBuyers;
  }

  /** A view on the pool's database, with a connection of its own. */
  public static PrincipalView on(Database db, Duration refresh, Duration bound) {
    return on(db, refresh, bound, Duration.ZERO);
  }

  /** The same, forgetting logouts older than {@code forgetEndedSessionsAfter} (the longest token lifetime and more). */
  public static PrincipalView on(Database db, Duration refresh, Duration bound, Duration forgetEndedSessionsAfter) {
    Properties props = MemoryView.connectionProperties("flashsale-principal-view", bound);
    return new PrincipalView(() -> db.openUnpooled(props), refresh, bound, DEFAULT_MAX_BUYERS, forgetEndedSessionsAfter);
  }

  @Override
  public synchronized void start() {
    if (thread != null) throw new IllegalStateException("already started");
    thread = MemoryView.startThread(this::run, "principal-view");
  }

  @Override
  public void close() {
    closed = true;
    Thread t;
    synchronized (this) {
      t = thread;
    }
    MemoryView.stopThread(t, current);
  }

  // ---------------------------------------------------------------- answers

  /** The standing from a poll within the bound; null when the view cannot be sure (read the database). */
  public Principals.Standing standing(String tenant, String subject) {
    if (!fresh()) return null;
    return standings.getOrDefault(new Principal(tenant, subject), Principals.Standing.CLEAR);
  }

  /**
   * True only when the principal has no order at all, known from a poll within the bound that
   * started after {@code knownSinceNanos} (a {@link System#nanoTime} instant). False means "read
   * the key": it may have an order, or the view cannot be sure.
   */
  public boolean hasNoOrder(String tenant, String subject, long knownSinceNanos) {
    long polled = polledAtNanos;
    if (polled == Long.MIN_VALUE || buyersOverflow || polled - knownSinceNanos <= 0) return false;
    if (System.nanoTime() - polled > boundNanos) return false;
    return !buyers.contains(new Principal(tenant, subject));
  }

  /** A revocation, logout or unrevoke made through this process: applied at once, before the next poll says so. */
  public void noteStanding(String tenant, String subject, Principals.Standing standing) {
    Principal p = new Principal(tenant, subject);
    synchronized (revokedLock) {
      notes.put(p, new Note(standing, System.nanoTime()));
      put(standings, p, standing);
    }
  }

  private static void put(Map<Principal, Principals.Standing> into, Principal p, Principals.Standing standing) {
    if (standing.equals(Principals.Standing.CLEAR)) into.remove(p);
    else into.put(p, standing);
  }

  /** An order this process saw created or answered: known at once, before the next poll says so. */
  public void noteOrdered(String tenant, String subject) {
    addBuyer(new Principal(tenant, subject));
  }

  // ---------------------------------------------------------------- state, for health and metrics

  @Override
  public long ageMillis() {
    long polled = polledAtNanos;
    return polled == Long.MIN_VALUE ? -1 : (System.nanoTime() - polled) / 1_000_000;
  }

  @Override
  public long boundMillis() {
    return boundNanos / 1_000_000;
  }

  @Override
  public Map<String, Object> details() {
    return Map.of("buyers", buyers(), "revoked", revokedCount(), "sessionsEnded", standings.size() - revokedCount());
  }

  public int buyers() {
    return buyers.size();
  }

  public int revokedCount() {
    return (int) standings.values().stream().filter(Principals.Standing::revoked).count();
  }

  public long polls() {
    return polls.get();
  }

  public String lastError() {
    return lastError;
  }

  @Override
  public String describe() {
    long age = ageMillis();
    return (age < 0 ? "no poll yet" : "last poll " + age + " ms ago") + ", bound " + boundMillis() + " ms, "
        + buyers() + " buyers" + (buyersOverflow ? " (over " + maxBuyers + ": the key is always read)" : "") + ", "
        + revokedCount() + " revoked, " + (standings.size() - revokedCount()) + " logged out" + (fresh() ? "" : "; stale: the gate reads the database")
        + (lastError == null ? "" : "; last error: " + lastError);
  }

  // ---------------------------------------------------------------- the view's thread

  private void run() {
    boolean failing = false;
    while (!closed) {
      try (Connection c = connections.open()) {
        current = c;
        if (closed) break;
        c.setAutoCommit(true);
        // after a reconnect, read every buyer again (nothing is assumed across the gap), and answer
        // nothing from the buyers until that read is complete
        polledAtNanos = Long.MIN_VALUE;
        horizon = null;
        while (!closed) {
          poll(c);
          if (failing) log.info("principal view polling again: {}", describe());
          failing = false;
          Thread.sleep(refreshMillis);
        }
      } catch (InterruptedException e) {
        if (closed) break;
        Thread.currentThread().interrupt();
        break;
      } catch (SQLException | RuntimeException e) {
        if (closed) break;
        lastError = e.toString();
        if (!failing) log.warn("principal view cannot poll (revocation and key checks read the database after {} ms): {}",
            boundMillis(), e.toString());
        failing = true;
        try {
          Thread.sleep(Math.min(1_000, refreshMillis));
        } catch (InterruptedException ie) {
          break;
        }
      } finally {
        current = null;
      }
    }
  }

  /** One poll: the horizon first, then the revoked set and the buyers from the previous horizon. */
  private void poll(Connection c) throws SQLException {
    long started = System.nanoTime();
    Timestamp next = openTransactionsHorizon(c);
    if (next == null) {
      throw new SQLException("pg_stat_activity does not show every open transaction to this role (track_activities off,"
          + " or sessions of another role: grant it pg_read_all_stats)");
    }
    Map<Principal, Principals.Standing> now = new ConcurrentHashMap<>();
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT tenant, subject, revoked, tokens_not_before_ms FROM principals WHERE revoked OR tokens_not_before_ms > ?")) {
      ps.setLong(1, forgetEndedSessionsMillis <= 0 ? 0 : Math.max(0, System.currentTimeMillis() - forgetEndedSessionsMillis));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          put(now, new Principal(rs.getString(1), rs.getString(2)), new Principals.Standing(rs.getBoolean(3), rs.getLong(4)));
        }
      }
    }
    Timestamp from = horizon;
    if (from == null) {
      buyers.clear();
      buyersOverflow = false;
      try (PreparedStatement ps = c.prepareStatement("SELECT DISTINCT tenant, subject FROM orders");
          ResultSet rs = ps.executeQuery()) {
        while (rs.next()) addBuyer(new Principal(rs.getString(1), rs.getString(2)));
      }
    } else {
      try (PreparedStatement ps = c.prepareStatement("SELECT tenant, subject FROM orders WHERE created_at >= ?")) {
        ps.setTimestamp(1, from);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) addBuyer(new Principal(rs.getString(1), rs.getString(2)));
        }
      }
    }
    // a change noted after this poll started may have committed after its read: it stays as
    // noted until a poll started after it reads it
    synchronized (revokedLock) {
      for (var note : notes.entrySet()) {
        if (note.getValue().atNanos() - started > 0) {
          put(now, note.getKey(), note.getValue().standing());
        } else {
          notes.remove(note.getKey(), note.getValue());
        }
      }
      standings = now;
    }
    horizon = next;
    polledAtNanos = started;
    polls.incrementAndGet();
    lastError = null;
  }

  /**
   * The start of the oldest transaction of a client session open on this database now (or now,
   * with none open), less {@link #HORIZON_MARGIN}; null when some session's transaction is hidden
   * from this role or activity is not tracked. Background workers (autovacuum) write no orders
   * and would hold the horizon back for as long as they run.
   */
  private static Timestamp openTransactionsHorizon(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT least(now(), min(xact_start)) - interval '" + HORIZON_MARGIN + "',"
            + " count(*) FILTER (WHERE query = '<insufficient privilege>'), current_setting('track_activities')"
            + " FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getLong(2) > 0 || !"on".equals(rs.getString(3)) ? null : rs.getTimestamp(1);
    }
  }

  private void addBuyer(Principal p) {
    if (buyersOverflow) return;
    buyers.add(p);
    if (buyers.size() > maxBuyers) {
      buyersOverflow = true;
      buyers.clear();
      log.warn("principal view: more than {} buyers; the create gate reads the request key from the database", maxBuyers);
    }
  }
}
