package io.flashsale.persistence;

import static io.flashsale.persistence.StockView.Answer.AVAILABLE;
import static io.flashsale.persistence.StockView.Answer.NOT_KNOWN;
import static io.flashsale.persistence.StockView.Answer.SOLD_OUT;
import static io.flashsale.persistence.StockView.Answer.STALE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.flashsale.persistence.Inventory.Take;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The in-memory sold-out view on a real PostgreSQL: selling the last unit flips it to sold out, a
 * release or a larger total flips it back, each within a short delay and in every view on the
 * database; ordinary decrements notify nobody; a lost notification is made up by the next full
 * read; with its connection gone the view stops answering sold out once its state is older than
 * the bound.
 */
class StockViewTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String TENANT = "t1";
  private static final Duration TTL = Duration.ofMinutes(10);
  private static final int NO_LIMIT = 100;
  /** Flips in these tests must come by notification: the full read is too rare to explain them. */
  private static final Duration RARE_REFRESH = Duration.ofSeconds(30);
  private static final Duration LONG_BOUND = Duration.ofSeconds(60);
  /** How long a notified flip may take here (a loaded 2-core machine included). */
  private static final Duration FLIP_DEADLINE = Duration.ofSeconds(2);
  private static final AtomicInteger NEXT_ID = new AtomicInteger();

  private final Skus skus = new Skus(pg.db());
  private final List<StockView> views = new ArrayList<>();

  @AfterEach
  void closeViews() {
    views.forEach(StockView::close);
  }

  // ---------------------------------------------------------------- flips

  @Test
  void sellingTheLastUnitFlipsToSoldOutAndAReleaseOrALargerTotalFlipsBack() {
    StockView view = started(RARE_REFRESH, LONG_BOUND);
    String sku = newSku(2);
    awaitAnswer(view, sku, AVAILABLE, "new SKU (insert notified)");

    reserve(sku, "alice");
    assertEquals(AVAILABLE, view.answer(TENANT, sku), "2 -> 1 is no flip");
    String last = reserve(sku, "bob");
    awaitAnswer(view, sku, SOLD_OUT, "last unit sold");
    assertEquals(new Stock(2, 0, 2, 0), stock(sku));

    // a reservation expiring or cancelled gives its unit back (Inventory.release, as the workflow does)
    assertTrue(release(last));
    awaitAnswer(view, sku, AVAILABLE, "release");

    reserve(sku, "carol");
    awaitAnswer(view, sku, SOLD_OUT, "sold out again");

    // the admin task raises the total
    assertEquals(Skus.Upsert.UPDATED, skus.upsert(TENANT, sku, 5, null, null).outcome());
    awaitAnswer(view, sku, AVAILABLE, "total raised");

    // and lowers it to what is held: sold out by the admin, no sale involved
    assertEquals(Skus.Upsert.UPDATED, skus.upsert(TENANT, sku, 2, null, null).outcome());
    awaitAnswer(view, sku, SOLD_OUT, "total lowered to held");
    assertEquals(1, view.refreshes(), "every flip came by notification, not by a full read");
  }

  @Test
  void twoViewsOnOneDatabaseBothSeeEveryFlip() {
    StockView a = started(RARE_REFRESH, LONG_BOUND);
    StockView b = started(RARE_REFRESH, LONG_BOUND);
    String sku = newSku(1);
    awaitAnswer(a, sku, AVAILABLE, "view a: new SKU");
    awaitAnswer(b, sku, AVAILABLE, "view b: new SKU");

    String key = reserve(sku, "alice");
    awaitAnswer(a, sku, SOLD_OUT, "view a: last unit sold");
    awaitAnswer(b, sku, SOLD_OUT, "view b: last unit sold");

    assertTrue(release(key));
    awaitAnswer(a, sku, AVAILABLE, "view a: release");
    awaitAnswer(b, sku, AVAILABLE, "view b: release");
  }

  @Test
  void aSkuTheViewNeverSawIsNotKnownAndAnExistingOneKnownAfterTheFirstRead() {
    String before = newSku(0); // inserted before the view listens: learned from the first full read
    StockView view = started(RARE_REFRESH, LONG_BOUND);
    awaitAnswer(view, before, SOLD_OUT, "SKU from the first full read");
    assertEquals(NOT_KNOWN, view.answer(TENANT, "no-such-sku"));
    assertEquals(NOT_KNOWN, view.answer("other-tenant", before), "SKUs are per tenant");
  }

  // ---------------------------------------------------------------- what is notified

  @Test
  void onlyFlipsAndNewSkusAreNotifiedNeverAnOrdinaryDecrement() throws Exception {
    try (Connection listener = pg.outsideConnection()) {
      try (Statement st = listener.createStatement()) {
        st.execute("LISTEN " + StockView.CHANNEL);
      }
      PGConnection pgc = listener.unwrap(PGConnection.class);
      String sku = newSku(10);
      assertEquals(List.of("{\"tenant\" : \"t1\", \"sku\" : \"" + sku + "\", \"remaining\" : 10}"), drain(pgc, sku),
          "the insert is notified");

      for (int i = 0; i < 5; i++) reserve(sku, "buyer-" + i); // 10 -> 5
      assertEquals(List.of(), drain(pgc, sku), "10 -> 5: no notification");

      for (int i = 5; i < 9; i++) reserve(sku, "buyer-" + i); // 5 -> 1
      assertEquals(List.of(), drain(pgc, sku), "5 -> 1: no notification");

      // a take of the last unit that is rolled back (USER_LIMIT) notifies nobody: NOTIFY is sent at commit
      assertThrows(RuntimeException.class, () -> pg.db().inTx(c -> {
        Take t = Inventory.take(c, TENANT, sku, "buyer-0", 1, 1);
        assertEquals(Take.USER_LIMIT, t);
        throw new IllegalStateException("rolled back as the workflow's reserve does");
      }));
      assertEquals(List.of(), drain(pgc, sku), "a rolled-back take: no notification");

      reserve(sku, "buyer-9"); // 1 -> 0
      assertEquals(List.of("{\"tenant\" : \"t1\", \"sku\" : \"" + sku + "\", \"remaining\" : 0}"), drain(pgc, sku),
          "1 -> 0: one notification");

      // a take refused for no stock changes no row: nothing
      assertEquals(Take.SOLD_OUT, pg.db().inTx(c -> Inventory.take(c, TENANT, sku, "buyer-10", 1, NO_LIMIT)));
      assertEquals(List.of(), drain(pgc, sku), "refused take: no notification");
    }
  }

  // ---------------------------------------------------------------- the safety net and the bound

  @Test
  void aLostNotificationIsMadeUpByTheNextFullRead() throws Exception {
    StockView view = started(Duration.ofMillis(200), Duration.ofMillis(1_000));
    String sku = newSku(1);
    awaitAnswer(view, sku, AVAILABLE, "new SKU");
    try (Connection c = pg.outsideConnection(); Statement st = c.createStatement()) {
      // triggers off for this session only: the flip happens without its notification
      st.execute("SET session_replication_role = replica");
      st.executeUpdate("UPDATE sku SET remaining = 0 WHERE tenant = '" + TENANT + "' AND sku = '" + sku + "'");
    }
    long ms = awaitAnswer(view, sku, SOLD_OUT, "flip without notification, seen by a full read");
    assertTrue(ms < 1_000, "within about one refresh interval, took " + ms + " ms");
  }

  @Test
  void withItsConnectionGoneTheViewStopsAnsweringSoldOutOnceOlderThanTheBound() throws Exception {
    AtomicBoolean databaseReachable = new AtomicBoolean(true);
    String appName = "stock-view-test-" + NEXT_ID.incrementAndGet();
    Duration bound = Duration.ofMillis(600);
    StockView view = new StockView(() -> {
      if (!databaseReachable.get()) throw new SQLException("connection refused (test)", "08001");
      Connection c = pg.outsideConnection();
      try (Statement st = c.createStatement()) {
        st.execute("SET application_name = '" + appName + "'");
      }
      return c;
    }, Duration.ofMillis(150), bound);
    views.add(view);
    view.start();
    String sku = newSku(0);
    awaitAnswer(view, sku, SOLD_OUT, "sold-out SKU");
    assertTrue(view.fresh());

    // the database goes away for the view: its session is killed and reconnecting fails
    databaseReachable.set(false);
    // with a timeout: returns once the session is gone
    assertEquals(1, pg.number("SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity"
        + " WHERE application_name = ?", appName));
    long cut = System.nanoTime();
    // nothing learned after the cut (every read the view could still make started before it): past
    // the bound the view must not say sold out, whatever it held
    sleepUntil(cut + bound.toNanos() + Duration.ofMillis(20).toNanos());
    assertEquals(STALE, view.answer(TENANT, sku), "state older than the bound is never a sold-out answer");
    assertEquals(STALE, view.answer(TENANT, "no-such-sku"), "nor a 'not known'");
    assertFalse(view.fresh());
    assertFalse(view.listening());
    assertTrue(view.lastError() != null, view.describe());
    System.out.println("stock view while the database is away: " + view.describe());

    // back: it reconnects, reads everything again and answers from the view once more
    databaseReachable.set(true);
    long ms = awaitAnswer(view, sku, SOLD_OUT, "after reconnecting");
    System.out.println("stock view answered sold out again " + ms + " ms after the database came back");
  }

  @Test
  void theBoundMustExceedTheRefreshInterval() {
    assertThrows(IllegalArgumentException.class,
        () -> new StockView(pg::outsideConnection, Duration.ofMillis(1_000), Duration.ofMillis(1_000)));
  }

  @Test
  void beforeItsFirstReadTheViewAnswersNothing() {
    StockView notStarted = new StockView(pg::outsideConnection, Duration.ofMillis(100), Duration.ofMillis(500));
    String sku = newSku(0);
    assertEquals(STALE, notStarted.answer(TENANT, sku));
    assertNotEquals(SOLD_OUT, notStarted.answer(TENANT, sku));
    assertEquals(-1, notStarted.ageMillis());
  }

  // ---------------------------------------------------------------- helpers

  private StockView started(Duration refresh, Duration bound) {
    StockView view = StockView.on(pg.db(), refresh, bound);
    views.add(view);
    view.start();
    return view;
  }

  private String newSku(int total) {
    String sku = "sv-" + NEXT_ID.incrementAndGet();
    assertEquals(Skus.Upsert.CREATED, skus.upsert(TENANT, sku, total, 1990L, NO_LIMIT).outcome());
    return sku;
  }

  /** One unit held for the subject, committed; the reservation key. */
  private static String reserve(String sku, String subject) {
    String key = "sv-res-" + NEXT_ID.incrementAndGet();
    assertEquals(Take.HELD, pg.db().inTx(c -> Inventory.reserve(c, key, TENANT, sku, subject, 1, NO_LIMIT, TTL)));
    return key;
  }

  /** The reservation expires or is cancelled: its unit goes back on sale as the workflow's release does it. */
  private static boolean release(String key) {
    Boolean released = pg.db().inTx(c -> Inventory.release(c, key));
    return released;
  }

  private static Stock stock(String sku) {
    return pg.db().read(c -> Stock.of(c, TENANT, sku));
  }

  /** Polls until the view answers {@code want}; the delay in ms (printed), or fails past the deadline. */
  private static long awaitAnswer(StockView view, String sku, StockView.Answer want, String what) {
    long start = System.nanoTime();
    long deadline = start + FLIP_DEADLINE.toNanos();
    while (true) {
      StockView.Answer now = view.answer(TENANT, sku);
      if (now == want) {
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.println("stock view flip (" + what + ") to " + want + " seen after " + ms + " ms");
        return ms;
      }
      if (System.nanoTime() - deadline > 0) {
        fail(what + ": the view still answers " + now + " after " + FLIP_DEADLINE.toMillis() + " ms, wanted " + want
            + " (" + view.describe() + ")");
      }
      sleepMillis(2);
    }
  }

  /** The notifications about this SKU that arrive within a short wait. */
  private static List<String> drain(PGConnection listener, String sku) throws SQLException {
    List<String> payloads = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofMillis(300).toNanos();
    while (System.nanoTime() - deadline < 0) {
      PGNotification[] ns = listener.getNotifications(50);
      if (ns == null) continue;
      for (PGNotification n : ns) {
        if (n.getParameter().contains("\"" + sku + "\"")) payloads.add(n.getParameter());
      }
    }
    return payloads;
  }

  private static void sleepUntil(long nanoTime) {
    long left;
    while ((left = nanoTime - System.nanoTime()) > 0) sleepMillis(Math.max(1, left / 1_000_000));
  }

  private static void sleepMillis(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
