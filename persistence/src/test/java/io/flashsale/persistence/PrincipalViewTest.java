package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The in-memory caller view on a real PostgreSQL: a revocation or an order made by another
 * process is seen within a few polls; one made through this process at once; an order whose
 * transaction began before a poll and committed after it is still seen (the horizon of open
 * transactions); "no order" is said only from a poll that started after the instant asked for;
 * a view that cannot poll stops answering once its last poll is older than the bound.
 */
class PrincipalViewTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String TENANT = "t1";
  private static final Duration REFRESH = Duration.ofMillis(50);
  private static final Duration BOUND = Duration.ofSeconds(2);
  /** How long a change made elsewhere may take to be seen here (a loaded 2-core machine included). */
  private static final Duration SEEN_DEADLINE = Duration.ofSeconds(5);
  private static final AtomicInteger NEXT_ID = new AtomicInteger();

  private final List<PrincipalView> views = new ArrayList<>();
  private final String subject = "pv-buyer-" + NEXT_ID.incrementAndGet();

  @AfterEach
  void closeViews() {
    views.forEach(PrincipalView::close);
  }

  private PrincipalView started() {
    PrincipalView v = PrincipalView.on(pg.db(), REFRESH, BOUND);
    views.add(v);
    v.start();
    await("the first poll", v::fresh);
    return v;
  }

  @Test
  void aRevocationByAnotherProcessIsSeenWithinPollsAndOneOfThisProcessAtOnce() throws Exception {
    PrincipalView view = started();
    assertEquals(Boolean.FALSE, revoked(view, subject));

    // another process (plain SQL on a connection outside every pool) revokes and restores
    execute("INSERT INTO principals (tenant, subject, revoked) VALUES ('" + TENANT + "', '" + subject + "', true)");
    await("the revocation", () -> Boolean.TRUE.equals(revoked(view, subject)));
    execute("UPDATE principals SET revoked = false WHERE tenant = '" + TENANT + "' AND subject = '" + subject + "'");
    await("the restore", () -> Boolean.FALSE.equals(revoked(view, subject)));

    // this process: the view knows before its next poll, and no poll takes it back
    Principals principals = new Principals(pg.db(), view);
    principals.revoke(TENANT, subject);
    assertTrue(revoked(view, subject), "a revocation of this process is known at once");
    assertTrue(principals.isRevoked(TENANT, subject));
    long polls = view.polls();
    await("three more polls", () -> view.polls() >= polls + 3);
    assertTrue(revoked(view, subject), "the polls after it read it committed");
    assertTrue(principals.unrevoke(TENANT, subject));
    assertFalse(revoked(view, subject), "a restore of this process is known at once");
  }

  @Test
  void aRevocationOrLogoutRefusesEveryTokenIssuedUntilThenAndAnUnrevokeRevivesNone() throws Exception {
    PrincipalView view = started();
    Principals principals = new Principals(pg.db(), view);
    Principals fromDatabase = new Principals(pg.db(), null);
    long before = System.currentTimeMillis();
    Thread.sleep(2);
    assertFalse(principals.standing(TENANT, subject).refusesTokenIssuedAt(before), "nothing refused yet");

    principals.endSessions(TENANT, subject);
    long loggedOut = fromDatabase.standing(TENANT, subject).tokensNotBeforeMillis();
    assertTrue(loggedOut > before, "a logout refuses the tokens issued until it");
    for (Principals p : List.of(principals, fromDatabase)) {
      assertFalse(p.standing(TENANT, subject).revoked(), "a logout does not revoke");
      assertTrue(p.standing(TENANT, subject).refusesTokenIssuedAt(before));
      assertFalse(p.standing(TENANT, subject).refusesTokenIssuedAt(loggedOut + 1), "a later login works");
    }

    Thread.sleep(2);
    principals.revoke(TENANT, subject);
    long revokedAt = fromDatabase.standing(TENANT, subject).tokensNotBeforeMillis();
    assertTrue(revokedAt > loggedOut, "a revocation moves the instant on");
    assertTrue(principals.unrevoke(TENANT, subject));
    for (Principals p : List.of(principals, fromDatabase)) {
      Principals.Standing after = p.standing(TENANT, subject);
      assertFalse(after.revoked());
      assertEquals(revokedAt, after.tokensNotBeforeMillis(), "an unrevoke keeps the instant");
      assertTrue(after.refusesTokenIssuedAt(revokedAt - 1), "a token from before the revocation stays refused");
      assertFalse(after.refusesTokenIssuedAt(revokedAt + 1), "a token issued after it works");
    }
    await("a poll reads the same standing", () -> {
      Principals.Standing polled = view.standing(TENANT, subject);
      return polled != null && polled.tokensNotBeforeMillis() == revokedAt && !polled.revoked();
    });
  }

  @Test
  void aLogoutEndsAtLeastThePresentedTokenAndOneOlderThanTheLifetimeIsNoLongerPolled() throws Exception {
    Principals fromDatabase = new Principals(pg.db(), null);
    long future = System.currentTimeMillis() + 30_000; // a token of an instance whose clock is ahead
    fromDatabase.endSessions(TENANT, subject, future);
    assertTrue(fromDatabase.standing(TENANT, subject).refusesTokenIssuedAt(future), "the token that logged out ends");

    PrincipalView forgetting = new PrincipalView(() -> pg.outsideConnection(), REFRESH, BOUND,
        PrincipalView.DEFAULT_MAX_BUYERS, Duration.ofMinutes(61));
    forgetting.start();
    views.add(forgetting);
    await("a poll", () -> forgetting.standing(TENANT, subject) != null);
    assertEquals(future, forgetting.standing(TENANT, subject).tokensNotBeforeMillis(), "a recent logout is polled");
    long twoHoursAgo = System.currentTimeMillis() - 7_200_000;
    execute("UPDATE principals SET tokens_not_before_ms = " + twoHoursAgo + " WHERE tenant = '" + TENANT
        + "' AND subject = '" + subject + "'");
    long polls = forgetting.polls();
    await("two more polls", () -> forgetting.polls() >= polls + 2);
    assertEquals(Principals.Standing.CLEAR, forgetting.standing(TENANT, subject),
        "every token that logout refused has expired: the view no longer carries it");
  }

  @Test
  void anOrderOfAnotherProcessIsSeenAndNoOrderIsSaidOnlyFromALaterPoll() {
    PrincipalView view = started();
    long asked = System.nanoTime();
    assertFalse(view.hasNoOrder(TENANT, subject, asked), "no poll has started after the instant asked for yet");
    await("a poll after the instant", () -> view.hasNoOrder(TENANT, subject, asked));

    TestOrders.create(pg.db(), "ord-pv-" + NEXT_ID.incrementAndGet(), TENANT, subject);
    await("the order", () -> !view.hasNoOrder(TENANT, subject, asked));
    assertFalse(view.hasNoOrder(TENANT, subject, longAgo()));
    assertTrue(view.hasNoOrder(TENANT, subject + "-nobody", longAgo()), "a buyer without orders still has none");

    // an order this process made is known at once
    String other = subject + "-b";
    assertTrue(view.hasNoOrder(TENANT, other, asked));
    view.noteOrdered(TENANT, other);
    assertFalse(view.hasNoOrder(TENANT, other, asked));
  }

  @Test
  void anOrderWhoseTransactionBeganBeforeAPollAndCommittedAfterItIsSeen() throws Exception {
    PrincipalView view = started();
    try (Connection c = pg.outsideConnection()) {
      c.setAutoCommit(false);
      // created_at is the transaction's start: older than the polls that run while it stays open
      OrderRow row = TestOrders.unsaved("ord-pv-" + NEXT_ID.incrementAndGet(), TENANT, subject, "k-open");
      OrderTransitions.insertCreated(c, row, null, TestOrders.CREATE_CAUSE);
      long polls = view.polls();
      await("polls while the order's transaction is open", () -> view.polls() >= polls + 5);
      long afterThose = System.nanoTime();
      await("a poll after those", () -> view.hasNoOrder(TENANT, subject, afterThose));
      c.commit();
    }
    long committed = System.nanoTime();
    await("a poll that started after the commit", () -> pollStartedAfter(view, committed));
    assertFalse(view.hasNoOrder(TENANT, subject, committed), "a poll that started after the commit knows the order");
  }

  @Test
  void aViewThatCannotPollAnswersNothingOnceItsLastPollIsOlderThanTheBound() {
    PrincipalView never = new PrincipalView(() -> {
      throw new java.sql.SQLException("no database here");
    }, REFRESH, Duration.ofMillis(300), PrincipalView.DEFAULT_MAX_BUYERS);
    views.add(never);
    never.start();
    assertNull(revoked(never, subject));
    assertFalse(never.hasNoOrder(TENANT, subject, longAgo()));

    java.util.concurrent.atomic.AtomicReference<Connection> theOne = new java.util.concurrent.atomic.AtomicReference<>();
    PrincipalView once = new PrincipalView(() -> {
      if (theOne.get() != null) throw new java.sql.SQLException("the database went away");
      theOne.set(pg.outsideConnection());
      return theOne.get();
    }, REFRESH, Duration.ofMillis(300), PrincipalView.DEFAULT_MAX_BUYERS);
    views.add(once);
    once.start();
    await("the first poll", once::fresh);
    assertEquals(Boolean.FALSE, revoked(once, subject));
    assertTrue(once.hasNoOrder(TENANT, subject, longAgo()), "fresh, it answers");
    // its connection dies under it, and no other opens
    try (Connection admin = pg.outsideConnection(); PreparedStatement ps = admin.prepareStatement(
        "SELECT pg_terminate_backend(?)")) {
      ps.setInt(1, theOne.get().unwrap(org.postgresql.PGConnection.class).getBackendPID());
      ps.execute();
    } catch (java.sql.SQLException e) {
      fail(e);
    }
    await("stale after the bound", () -> revoked(once, subject) == null);
    assertFalse(once.hasNoOrder(TENANT, subject, longAgo()));
    assertFalse(once.fresh());
  }

  @Test
  void pastItsLimitOfBuyersTheViewNeverSaysNoOrder() {
    // room for the buyers the other tests left in this database, and two more
    int limit = (int) pg.number("SELECT count(*) FROM (SELECT DISTINCT tenant, subject FROM orders) b") + 2;
    PrincipalView small = new PrincipalView(() -> pg.outsideConnection(), REFRESH, BOUND, limit);
    views.add(small);
    small.start();
    await("the first poll", small::fresh);
    small.noteOrdered(TENANT, "a");
    small.noteOrdered(TENANT, "b");
    assertTrue(small.hasNoOrder(TENANT, subject, longAgo()), "within its limit it answers");
    small.noteOrdered(TENANT, "c");
    assertFalse(small.hasNoOrder(TENANT, subject, longAgo()), "over its limit the key is always read");
  }

  // ---------------------------------------------------------------- helpers

  /** An instant every poll started after (without the overflow an extreme value would cause). */
  private static long longAgo() {
    return System.nanoTime() - Duration.ofHours(1).toNanos();
  }

  /** True once a poll that started after the instant has completed (hasNoOrder of a buyer nobody has). */
  /** Whether the view says the principal is revoked; null when it cannot be sure. */
  private static Boolean revoked(PrincipalView view, String subject) {
    Principals.Standing standing = view.standing(TENANT, subject);
    return standing == null ? null : standing.revoked();
  }

  private static boolean pollStartedAfter(PrincipalView view, long instant) {
    return view.hasNoOrder(TENANT, "nobody-" + instant, instant);
  }

  private static void execute(String sql) throws Exception {
    try (Connection c = pg.outsideConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.execute();
    }
  }

  private static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + SEEN_DEADLINE.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) fail(what + ": not within " + SEEN_DEADLINE.toMillis() + " ms");
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail(e);
      }
    }
  }
}
