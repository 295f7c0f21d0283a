package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * CAP-05: conservation holds in every snapshot taken while a sale runs, not only at the end. Four
 * buyer threads create orders (1 or 2 units) on two SKUs for 20 s, then pay (a third of the pays
 * declined), cancel or leave them to expire (2 s reservation TTL); one SKU sells out and lives on the units that come
 * back, the other keeps selling. Meanwhile a
 * sampler reads, in one SQL statement (one snapshot), every SKU's total, remaining, held and
 * confirmed units and the units of its PAID orders. In every sample, for every SKU:
 * total = remaining + held + confirmed, and confirmed = paid. The samples are counted, with how
 * many were taken while requests were in flight, while other transactions were writing (the
 * snapshot's in-progress list), and after a change.
 *
 * <p>Control: the same sampler, on a SKU of its own, watches a deliberately non-atomic update — a
 * take of a unit and its reservation written in two transactions, then the release likewise — and
 * must flag a sample in each gap (the writer waits in each gap until a sample that started after
 * its commit is done, so the control does not depend on luck).
 */
class Cap05ConservationSnapshotsTest {
  @RegisterExtension static final Stack stack = new Stack().with("orders.reservationTtl", "2s");
  @RegisterExtension static final Evidence ev = new Evidence("CAP-05",
      "conservation in every snapshot during a sale (creates, pays, cancels, declines, expiries)");

  private static final String[] SKUS = {"sku-cap05-a", "sku-cap05-b"};
  /** The first sells out and lives on the units that come back; the second keeps the sale moving. */
  private static final int[] TOTALS = {3, 400};
  private static final int BUYERS = 4;
  private static final long SALE_MS = 20_000;

  /**
   * One statement, so one snapshot: per SKU its stock, its reservations by status, the units of
   * its PAID orders, and how many transactions were in progress when the snapshot was taken.
   */
  private static final String SAMPLE = "SELECT s.sku, s.total, s.remaining,"
      + " (SELECT coalesce(sum(quantity), 0) FROM reservation r WHERE r.tenant = s.tenant AND r.sku = s.sku"
      + "   AND r.status = 'HELD') AS held,"
      + " (SELECT coalesce(sum(quantity), 0) FROM reservation r WHERE r.tenant = s.tenant AND r.sku = s.sku"
      + "   AND r.status = 'CONFIRMED') AS confirmed,"
      + " (SELECT coalesce(sum(quantity), 0) FROM orders o WHERE o.tenant = s.tenant AND o.sku = s.sku"
      + "   AND o.status = 'PAID') AS paid,"
      + " (SELECT count(*) FROM pg_snapshot_xip(pg_current_snapshot())) AS writers"
      + " FROM sku s WHERE s.tenant = 't1' AND s.sku = ANY (?) ORDER BY s.sku";

  private record Row(String sku, int total, int remaining, int held, int confirmed, int paid) {
    boolean conserves() {
      return total == remaining + held + confirmed && confirmed == paid;
    }

    @Override
    public String toString() {
      return sku + " total=" + total + " remaining=" + remaining + " held=" + held + " confirmed=" + confirmed
          + " paid=" + paid;
    }
  }

  private final AtomicInteger requestsInFlight = new AtomicInteger();
  private final Map<String, AtomicInteger> outcomes = new TreeMap<>();

  @Test
  void everySnapshotConserves() throws Exception {
    for (int i = 0; i < SKUS.length; i++) stack.sku(SKUS[i], TOTALS[i], 3);

    AtomicBoolean selling = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(BUYERS);
    List<Future<?>> buyers = new ArrayList<>();
    for (int t = 0; t < BUYERS; t++) {
      int thread = t;
      buyers.add(pool.submit(() -> {
        buy(thread, selling);
        return null;
      }));
    }

    long samples = 0;
    long duringRequests = 0;
    long withWriters = 0;
    long changed = 0;
    long notConserved = 0;
    List<String> broken = new ArrayList<>(); // the first 20, as evidence
    List<Row> previous = null;
    long end = System.currentTimeMillis() + SALE_MS;
    try (Connection c = stack.db().openUnpooled(new Properties());
        PreparedStatement ps = c.prepareStatement(SAMPLE)) {
      c.setAutoCommit(true); // READ COMMITTED, one statement: one snapshot
      ps.setArray(1, c.createArrayOf("text", SKUS));
      while (System.currentTimeMillis() < end) {
        boolean inFlight = requestsInFlight.get() > 0;
        List<Row> rows = new ArrayList<>();
        long writers = sample(ps, rows);
        samples++;
        if (inFlight && requestsInFlight.get() > 0) duringRequests++;
        if (writers > 0) withWriters++;
        if (previous != null && !previous.equals(rows)) changed++;
        previous = rows;
        boolean conserved = conserves(rows, SKUS.length);
        if (!conserved) {
          notConserved++;
          if (broken.size() < 20) broken.add("sample " + samples + ": " + rows);
        }
        Thread.sleep(5);
      }
      selling.set(false);
      for (Future<?> f : buyers) f.get();
      pool.shutdown();

      ev.note("samples=" + samples + " taken while requests were in flight=" + duringRequests
          + " while other transactions were writing=" + withWriters + " after a change=" + changed);
      ev.note("buyer outcomes " + outcomes);
      if (!broken.isEmpty()) ev.note("not conserved: " + broken);
      ev.check(notConserved == 0, "every sample conserves: total = remaining + held + confirmed and confirmed = paid, per SKU ("
          + samples + " samples, " + notConserved + " not)");
      ev.check(samples >= 300, "enough samples (" + samples + " ≥ 300)");
      ev.check(duringRequests >= 100, "samples overlapped the sale's requests (" + duringRequests + " ≥ 100)");
      ev.check(changed >= 10, "the state moved between samples (" + changed + " changes ≥ 10)");
      ev.check(count("CREATE SOLD_OUT") > 0, "the stock ran out at least once");

      // after the sale: every reservation settled, the same invariant, nothing held
      stack.awaitTrue(() -> stack.sql.count("SELECT count(*) FROM orders WHERE status NOT IN"
          + " ('PAID', 'FAILED', 'CANCELLED', 'REFUNDED')") == 0, 30_000, "orders still open after the sale");
      Map<String, Integer> moves = stack.sql.histogram("SELECT t.to_status || ' (' || t.cause || ')' FROM order_transition t"
          + " JOIN orders o USING (order_id) WHERE o.sku = ANY (string_to_array(?, ',')) AND t.to_status <> 'CREATED'",
          String.join(",", SKUS));
      ev.note("transitions " + moves);
      ev.check(moves.getOrDefault("CANCELLED (reservation expired)", 0) > 0, "expiries happened");
      ev.check(moves.keySet().stream().anyMatch(k -> k.startsWith("CANCELLED (") && !k.contains("expired")), "cancels happened");
      ev.check(moves.keySet().stream().anyMatch(k -> k.startsWith("FAILED")), "declined pays happened");
      ev.check(moves.keySet().stream().anyMatch(k -> k.startsWith("PAID")), "paid orders happened");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Row r = new Row(rs.getString(1), rs.getInt(2), rs.getInt(3), rs.getInt(4), rs.getInt(5), rs.getInt(6));
          ev.note("after the sale: " + r);
          ev.check(r.conserves() && r.held() == 0, r.sku() + " conserves after the sale with nothing held");
        }
      }
    } finally {
      selling.set(false);
      pool.shutdownNow();
    }
    // the rows are final; a workflow may still be catching up (e.g. a workflow task retried after its timeout)
    java.util.function.BooleanSupplier clean = () -> {
      String summary = stack.reconcileSummary();
      return summary.contains(" mismatches=0 ") && summary.contains(" pending=0 ") && summary.endsWith("drift=0");
    };
    if (!stack.within(clean, 30_000)) ev.note("reconcile report:\n" + stack.reconcile().trim());
    stack.checkReconcileClean(ev, "reconcile clean");

    controlFlagsANonAtomicUpdate();
  }

  /** One snapshot into rows; returns how many transactions were in progress when it was taken. */
  private static long sample(PreparedStatement ps, List<Row> rows) throws java.sql.SQLException {
    long writers = 0;
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rows.add(new Row(rs.getString(1), rs.getInt(2), rs.getInt(3), rs.getInt(4), rs.getInt(5), rs.getInt(6)));
        writers = rs.getLong(7);
      }
    }
    return writers;
  }

  /** The check every sample must pass: each expected SKU present and conserving. */
  private static boolean conserves(List<Row> rows, int skus) {
    return rows.size() == skus && rows.stream().allMatch(Row::conserves);
  }

  private static final String CONTROL_SKU = "sku-cap05-control";
  private static final int CONTROL_CYCLES = 3;

  /**
   * The negative control: a take and a release each split over two transactions (stock row, then
   * reservation; reservation, then stock row), with a sample forced into every gap. The sampler and
   * its check are the ones above; they must flag at least one sample per gap.
   */
  private void controlFlagsANonAtomicUpdate() throws Exception {
    stack.sku(CONTROL_SKU, 5, 3);
    AtomicLong samples = new AtomicLong();
    AtomicLong flagged = new AtomicLong();
    AtomicBoolean sampling = new AtomicBoolean(true);
    List<String> firstFlagged = java.util.Collections.synchronizedList(new ArrayList<>());
    ExecutorService sampler = Executors.newSingleThreadExecutor();
    Future<?> sampled = sampler.submit(() -> {
      try (Connection c = stack.db().openUnpooled(new Properties()); PreparedStatement ps = c.prepareStatement(SAMPLE)) {
        c.setAutoCommit(true);
        ps.setArray(1, c.createArrayOf("text", new String[] {CONTROL_SKU}));
        while (sampling.get()) {
          List<Row> rows = new ArrayList<>();
          sample(ps, rows);
          if (!conserves(rows, 1)) {
            flagged.incrementAndGet();
            if (firstFlagged.size() < 3) firstFlagged.add(rows.toString());
          }
          samples.incrementAndGet();
          Thread.sleep(5);
        }
      }
      return null;
    });
    int gaps = 0;
    try (Connection w = java.sql.DriverManager.getConnection(stack.wiring.jdbcUrl())) {
      w.setAutoCommit(true); // each statement its own transaction: that is the defect under control
      for (int cycle = 0; cycle < CONTROL_CYCLES; cycle++) {
        String key = "cap05-control-" + cycle;
        update(w, "UPDATE sku SET remaining = remaining - 1 WHERE tenant = 't1' AND sku = ?", CONTROL_SKU);
        awaitSampleAfterCommit(samples, sampled);
        gaps++;
        update(w, "INSERT INTO reservation (reservation_key, tenant, sku, subject, quantity, status, expires_at)"
            + " VALUES (?, 't1', '" + CONTROL_SKU + "', 'user-cap05-control', 1, 'HELD', now() + interval '1 hour')", key);
        update(w, "UPDATE reservation SET status = 'RELEASED' WHERE reservation_key = ?", key);
        awaitSampleAfterCommit(samples, sampled);
        gaps++;
        update(w, "UPDATE sku SET remaining = remaining + 1 WHERE tenant = 't1' AND sku = ?", CONTROL_SKU);
      }
      awaitSampleAfterCommit(samples, sampled);
    } finally {
      sampling.set(false);
      sampled.get(30, java.util.concurrent.TimeUnit.SECONDS);
      sampler.shutdown();
    }
    ev.note("control (non-atomic take and release, " + gaps + " gaps): " + samples.get() + " samples, " + flagged.get()
        + " flagged, e.g. " + firstFlagged);
    ev.check(flagged.get() >= gaps, "control: the sampler flags a non-atomic update, at least one sample per gap ("
        + flagged.get() + " flagged >= " + gaps + " gaps)");
  }

  private static void update(Connection c, String sql, String arg) throws java.sql.SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, arg);
      ps.executeUpdate();
    }
  }

  /** Waits until a sample that started after the last commit is done (the second one from now). */
  private static void awaitSampleAfterCommit(AtomicLong samples, Future<?> sampler) throws Exception {
    long target = samples.get() + 2;
    long deadline = System.currentTimeMillis() + 60_000;
    while (samples.get() < target) {
      if (sampler.isDone()) sampler.get(); // the sampler failed: say why
      if (System.currentTimeMillis() > deadline) throw new AssertionError("control: the sampler took no sample in 60 s");
      Thread.sleep(5);
    }
  }

  private int count(String outcome) {
    synchronized (outcomes) {
      AtomicInteger n = outcomes.get(outcome);
      return n == null ? 0 : n.get();
    }
  }

  private void record(String outcome) {
    synchronized (outcomes) {
      outcomes.computeIfAbsent(outcome, k -> new AtomicInteger()).incrementAndGet();
    }
  }

  private <T> T request(Supplier<T> call) {
    requestsInFlight.incrementAndGet();
    try {
      return call.get();
    } finally {
      requestsInFlight.decrementAndGet();
    }
  }

  /** One buyer thread: a new subject per order, create, then pay (a third declined), cancel or let it expire. */
  private void buy(int thread, AtomicBoolean selling) throws InterruptedException {
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    AtomicLong n = new AtomicLong();
    long orders = 0;
    while (selling.get()) {
      String subject = "user-cap05-" + thread + "-" + n.incrementAndGet();
      HttpJson buyer = request(() -> stack.api.login("t1", subject));
      String sku = SKUS[rnd.nextInt(SKUS.length)];
      int quantity = 1 + rnd.nextInt(2);
      HttpJson.Reply created = request(() -> Buyers.create(buyer, "cap05-" + subject, sku, quantity));
      if (created.status() != 201) {
        record("CREATE " + created.text("outcome"));
        Thread.sleep(100);
        continue;
      }
      String id = created.text("order_id");
      // each thread cycles through pay, cancel, declined pay, expiry, pay, cancel
      int action = (int) (orders++ % 6);
      if (action == 0 || action == 2 || action == 4) {
        if (action == 2) Buyers.fault(stack.channel, id, Map.of("decline", true));
        HttpJson.Reply paid = request(() -> Buyers.pay(buyer, id));
        record(String.valueOf(paid.text("status")));
      } else if (action == 1 || action == 5) {
        HttpJson.Reply cancelled = request(() -> Buyers.cancel(buyer, id));
        record(String.valueOf(cancelled.text("status")));
      } else {
        record("EXPIRED"); // left alone: the reservation TTL cancels it
      }
    }
  }
}
