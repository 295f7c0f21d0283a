package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.api.resources.PrincipalRates.Kind;
import io.flashsale.api.resources.PrincipalRates.Limit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Token buckets per principal and kind, on a clock the test moves. */
class PrincipalRatesTest {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final PrincipalRates rates = new PrincipalRates(new Limit(2, 3), new Limit(10, 5), nanos::get);

  private void advanceMillis(long ms) {
    nanos.addAndGet(ms * 1_000_000);
  }

  @Test
  void aQuietPrincipalSpendsItsBurstThenWaitsForTheRate() {
    for (int i = 0; i < 3; i++) assertEquals(0, rates.admit("t1/ada", Kind.WRITE), "burst, write " + i);
    assertEquals(1, rates.admit("t1/ada", Kind.WRITE), "the fourth at once: a token comes in half a second");
    advanceMillis(499);
    assertEquals(1, rates.admit("t1/ada", Kind.WRITE));
    advanceMillis(1);
    assertEquals(0, rates.admit("t1/ada", Kind.WRITE), "two writes a second");
    assertEquals(1, rates.admit("t1/ada", Kind.WRITE));
  }

  @Test
  void principalsAndKindsHaveTheirOwnBuckets() {
    for (int i = 0; i < 3; i++) rates.admit("t1/ada", Kind.WRITE);
    assertTrue(rates.admit("t1/ada", Kind.WRITE) > 0);
    assertEquals(0, rates.admit("t1/bob", Kind.WRITE), "another buyer is served");
    assertEquals(0, rates.admit("t2/ada", Kind.WRITE), "the same subject of another tenant is another principal");
    for (int i = 0; i < 5; i++) assertEquals(0, rates.admit("t1/ada", Kind.READ), "reads have their own burst");
    assertTrue(rates.admit("t1/ada", Kind.READ) > 0);
  }

  @Test
  void theWaitSaysWholeSecondsAtSlowRates() {
    PrincipalRates slow = new PrincipalRates(new Limit(0.1, 1), new Limit(1, 1), nanos::get);
    assertEquals(0, slow.admit("t1/ada", Kind.WRITE));
    assertEquals(10, slow.admit("t1/ada", Kind.WRITE), "one write in ten seconds");
    advanceMillis(4_000);
    assertEquals(6, slow.admit("t1/ada", Kind.WRITE));
  }

  @Test
  void refilledBucketsAreForgottenOnceTheMapIsLarge() {
    for (int i = 0; i <= PrincipalRates.SWEEP_AT; i++) rates.admit("t1/buyer-" + i, Kind.READ);
    assertTrue(rates.size() > PrincipalRates.SWEEP_AT / 2, "within the refill time every bucket is kept");
    advanceMillis(1_000); // 10 reads a second, burst 5: full again after half a second
    rates.admit("t1/late", Kind.READ);
    assertEquals(1, rates.size(), "only the new buyer's bucket is left");
  }

  @Test
  void aLimitNeedsARateAndABurst() {
    assertThrows(IllegalArgumentException.class, () -> new Limit(0, 1));
    assertThrows(IllegalArgumentException.class, () -> new Limit(1, 0));
  }
}
