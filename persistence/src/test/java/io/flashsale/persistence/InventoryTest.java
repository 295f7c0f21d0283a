package io.flashsale.persistence;

import static io.flashsale.persistence.Inventory.Take.HELD;
import static io.flashsale.persistence.Inventory.Take.SOLD_OUT;
import static io.flashsale.persistence.Inventory.Take.USER_LIMIT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.CreateOutcome;
import io.flashsale.persistence.Inventory.Take;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Stock and reservations on a real PostgreSQL: total = remaining + held + confirmed for a SKU after
 * every take, hold, confirm, release and total reset; a second confirm or release of a reservation
 * changes nothing and says so; a take past the stock or the buyer's limit is refused.
 */
class InventoryTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();

  private static final String TENANT = "t1";
  private static final String ALICE = "alice";
  private static final String BOB = "bob";
  private static final long UNIT_PRICE = 1990;
  private static final int NO_LIMIT = 100;
  private static final Duration TTL = Duration.ofMinutes(10);
  /** Every test has SKUs and reservations of its own. */
  private static final AtomicInteger NEXT_ID = new AtomicInteger();

  private final Skus skus = new Skus(pg.db());

  /** A SKU's units by where they are. */
  // ---- conservation

  @Test
  void everyStepKeepsTotalEqualToRemainingPlusHeldPlusConfirmed() {
    String sku = newSku(5, NO_LIMIT);
    String alices = newKey();
    String bobs = newKey();
    assertEquals(new Stock(5, 5, 0, 0), conservedStock(sku));

    assertEquals(HELD, reserve(alices, sku, ALICE, 2));
    assertEquals(new Stock(5, 3, 2, 0), conservedStock(sku));

    assertEquals(HELD, reserve(bobs, sku, BOB, 1));
    assertEquals(new Stock(5, 2, 3, 0), conservedStock(sku));

    assertTrue(confirm(alices));
    assertEquals(new Stock(5, 2, 1, 2), conservedStock(sku));

    assertTrue(release(bobs));
    assertEquals(new Stock(5, 3, 0, 2), conservedStock(sku));
  }

  @Test
  void resettingTheTotalKeepsHeldAndConfirmedUnitsCounted() {
    String sku = newSku(5, NO_LIMIT);
    String confirmed = newKey();
    reserve(confirmed, sku, ALICE, 2);
    confirm(confirmed);
    reserve(newKey(), sku, BOB, 1);

    Skus.Upsert reset = skus.upsert(TENANT, sku, 8, null, null);

    assertEquals(new Skus.Upsert(Skus.Upsert.UPDATED, 8, 5, UNIT_PRICE, NO_LIMIT, 3), reset);
    assertEquals(new Stock(8, 5, 1, 2), conservedStock(sku));
    assertEquals(5, skus.remaining(TENANT, sku));
  }

  @Test
  void aTotalBelowTheUnitsAlreadyTakenIsRefusedAndChangesNothing() {
    String sku = newSku(5, NO_LIMIT);
    reserve(newKey(), sku, ALICE, 3);
    Stock before = conservedStock(sku);

    Skus.Upsert refused = skus.upsert(TENANT, sku, 2, null, null);

    assertEquals(Skus.Upsert.BELOW_HELD, refused.outcome());
    assertEquals(3, refused.held());
    assertEquals(before, conservedStock(sku));
  }

  @Test
  void aNewSkuNeedsAPriceAndALimit() {
    String sku = "sku-" + NEXT_ID.incrementAndGet();

    assertEquals(Skus.Upsert.NEEDS_PRICE_AND_LIMIT, skus.upsert(TENANT, sku, 5, null, 2).outcome());
    assertEquals(Skus.Upsert.NEEDS_PRICE_AND_LIMIT, skus.upsert(TENANT, sku, 5, UNIT_PRICE, null).outcome());
    assertEquals(-1, skus.remaining(TENANT, sku), "nothing was created");
  }

  // ---- idempotent per reservation key

  @Test
  void aSecondConfirmChangesNothingAndSaysSo() {
    String sku = newSku(3, NO_LIMIT);
    String key = newKey();
    reserve(key, sku, ALICE, 1);
    assertTrue(confirm(key));
    Stock confirmedOnce = conservedStock(sku);

    assertFalse(confirm(key));

    assertEquals(confirmedOnce, conservedStock(sku));
    assertEquals("CONFIRMED", status(key));
  }

  @Test
  void aSecondReleaseChangesNothingAndSaysSo() {
    String sku = newSku(3, NO_LIMIT);
    String key = newKey();
    reserve(key, sku, ALICE, 2);
    assertTrue(release(key));
    Stock releasedOnce = conservedStock(sku);

    assertFalse(release(key));

    assertEquals(new Stock(3, 3, 0, 0), releasedOnce);
    assertEquals(releasedOnce, conservedStock(sku), "the units went back on sale once");
    assertEquals("RELEASED", status(key));
  }

  @Test
  void aConfirmedUnitIsNeverReleasedAndAReleasedOneNeverConfirmed() {
    String sku = newSku(3, NO_LIMIT);
    String confirmed = newKey();
    String released = newKey();
    reserve(confirmed, sku, ALICE, 1);
    reserve(released, sku, BOB, 1);
    confirm(confirmed);
    release(released);
    Stock before = conservedStock(sku);

    assertFalse(release(confirmed));
    assertFalse(confirm(released));

    assertEquals(before, conservedStock(sku));
    assertEquals("CONFIRMED", status(confirmed));
    assertEquals("RELEASED", status(released));
  }

  @Test
  void anUnknownReservationIsNeitherConfirmedNorReleased() {
    String key = newKey();

    assertFalse(confirm(key));
    assertFalse(release(key));
    assertNull(status(key));
  }

  // ---- refusals

  @Test
  void aTakePastTheRemainingStockIsSoldOutAndTakesNothing() {
    String sku = newSku(3, NO_LIMIT);
    reserve(newKey(), sku, BOB, 2);
    Stock oneLeft = conservedStock(sku);

    assertEquals(SOLD_OUT, reserve(newKey(), sku, ALICE, 2));
    assertEquals(oneLeft, conservedStock(sku));

    assertEquals(HELD, reserve(newKey(), sku, ALICE, 1));
    assertEquals(SOLD_OUT, reserve(newKey(), sku, "carol", 1));
    assertEquals(new Stock(3, 0, 3, 0), conservedStock(sku));
  }

  @Test
  void aTakePastTheBuyersLimitIsRefusedWhileOthersStillBuy() {
    String sku = newSku(10, 2);
    reserve(newKey(), sku, ALICE, 2);
    Stock aliceAtHerLimit = conservedStock(sku);

    assertEquals(USER_LIMIT, reserve(newKey(), sku, ALICE, 1));
    assertEquals(aliceAtHerLimit, conservedStock(sku));

    assertEquals(HELD, reserve(newKey(), sku, BOB, 2));
  }

  /**
   * A buyer at the limit who keeps creating with fresh keys must not queue on the hot SKU row: with
   * the row locked by another transaction (a create in flight), the take answers USER_LIMIT at once.
   */
  @Test
  void aBuyerAtTheLimitIsRefusedWithoutTakingTheSkuRowLock() throws Exception {
    String sku = newSku(10, 1);
    reserve(newKey(), sku, ALICE, 1);
    java.util.concurrent.CountDownLatch locked = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    Thread holder = new Thread(() -> pg.db().inTx(c -> {
      try (var ps = c.prepareStatement("SELECT 1 FROM sku WHERE tenant = ? AND sku = ? FOR UPDATE")) {
        ps.setString(1, TENANT);
        ps.setString(2, sku);
        ps.executeQuery().close();
      }
      locked.countDown();
      try {
        done.await(30, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return null;
    }));
    holder.start();
    try {
      assertTrue(locked.await(10, java.util.concurrent.TimeUnit.SECONDS));
      Take refused = pg.db().inTx(c -> {
        try (var st = c.createStatement()) {
          st.execute("SET LOCAL lock_timeout = '2s'"); // waiting on the row would fail the take instead
        }
        Take t = Inventory.take(c, TENANT, sku, ALICE, 1, 1);
        c.rollback();
        return t;
      });
      assertEquals(USER_LIMIT, refused);
    } finally {
      done.countDown();
      holder.join(10_000);
    }
  }

  /** Over both the stock and the buyer's limit: SOLD_OUT, as the decrement alone answered it. */
  @Test
  void aRequestPastTheStockAndTheLimitIsSoldOut() {
    String sku = newSku(1, 1);
    assertEquals(SOLD_OUT, reserve(newKey(), sku, ALICE, 2));
    reserve(newKey(), sku, BOB, 1);
    assertEquals(SOLD_OUT, reserve(newKey(), sku, BOB, 1), "at his limit, and nothing left");
  }

  @Test
  void confirmedUnitsCountTowardTheLimitAndReleasedOnesDoNot() {
    String sku = newSku(10, 2);
    String paid = newKey();
    String abandoned = newKey();
    reserve(paid, sku, ALICE, 1);
    confirm(paid);
    reserve(abandoned, sku, ALICE, 1);

    assertEquals(USER_LIMIT, reserve(newKey(), sku, ALICE, 1));

    release(abandoned);
    assertEquals(HELD, reserve(newKey(), sku, ALICE, 1));
  }

  @Test
  void theLimitIsPerSku() {
    String first = newSku(10, 1);
    String second = newSku(10, 1);
    reserve(newKey(), first, ALICE, 1);

    assertEquals(HELD, reserve(newKey(), second, ALICE, 1));
  }

  @Test
  void eachRefusalIsTheCreatesAnswerAndAHoldIsNone() {
    assertEquals(CreateOutcome.SOLD_OUT, SOLD_OUT.refusal());
    assertEquals(CreateOutcome.USER_LIMIT, USER_LIMIT.refusal());
    assertThrows(IllegalStateException.class, HELD::refusal);
  }

  // ---- naming

  @Test
  void theFirstReservationOfAnOrderIsItsIdWithR1() {
    // later re-reserves of the same order count on from here: /r2, /r3, ...
    assertEquals("ord-10000/r1", Inventory.firstReservationKey("ord-10000"));
  }

  // ---- helpers: each call is one transaction, as the activities run them

  private String newSku(int total, int perUserLimit) {
    String sku = "sku-" + NEXT_ID.incrementAndGet();
    assertEquals(Skus.Upsert.CREATED, skus.upsert(TENANT, sku, total, UNIT_PRICE, perUserLimit).outcome());
    return sku;
  }

  private static String newKey() {
    return Inventory.firstReservationKey(String.format("ord-%04d", NEXT_ID.incrementAndGet()));
  }

  /** Reserves under the SKU's own limit; a refusal rolls back, as the create does (the take may have decremented). */
  private static Take reserve(String key, String sku, String subject, int quantity) {
    int limit = (int) pg.number("SELECT per_user_limit FROM sku WHERE tenant = ? AND sku = ?", TENANT, sku);
    return pg.db().inTx(c -> {
      Take taken = Inventory.reserve(c, key, TENANT, sku, subject, quantity, limit, TTL);
      if (taken != HELD) c.rollback();
      return taken;
    });
  }

  private static boolean confirm(String key) {
    return pg.db().inTx(c -> Inventory.confirm(c, key));
  }

  private static boolean release(String key) {
    return pg.db().inTx(c -> Inventory.release(c, key));
  }

  private static String status(String key) {
    return pg.db().read(c -> Inventory.status(c, key));
  }

  /** The SKU's stock, after checking that its units are all accounted for. */
  private static Stock conservedStock(String sku) {
    Stock stock = pg.db().read(c -> Stock.of(c, TENANT, sku));
    assertEquals(stock.total(), stock.remaining() + stock.held() + stock.confirmed(), "units unaccounted for: " + stock);
    return stock;
  }
}
