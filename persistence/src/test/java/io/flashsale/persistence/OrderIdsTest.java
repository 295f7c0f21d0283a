package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The order id permutation: every id is "ord-" and twelve digits; numbers map one to one (checked
 * exhaustively on a small network of the same construction, and on samples of the real one);
 * the same key always gives the same id, another key another; consecutive numbers give ids whose
 * numbers are far apart, so ids show no order volume.
 */
class OrderIdsTest {
  private static final Pattern ISSUED = Pattern.compile("ord-[0-9]{12}");
  /** The API's pattern (OwnOrders.ORDER_ID, openapi.json's OrderId). */
  private static final Pattern API = Pattern.compile("^ord-[0-9]{4,12}$");
  private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] OTHER_KEY = "fedcba9876543210fedcba9876543210".getBytes(StandardCharsets.US_ASCII);

  private final OrderIds ids = new OrderIds(KEY);

  @Test
  void everyIdIsOrdAndTwelveDigitsWhichTheApiAccepts() {
    for (long n : new long[] {0, 1, 2, 9_999, 10_000, 123_456_789, OrderIds.SPACE - 2, OrderIds.SPACE - 1}) {
      String id = ids.id(n);
      assertTrue(ISSUED.matcher(id).matches(), n + " → " + id);
      assertTrue(API.matcher(id).matches(), n + " → " + id);
    }
  }

  @Test
  void aSmallNetworkOfTheSameConstructionIsABijectionOfItsWholeSpace() {
    // 2 × 6 bits = 4096 values, cycle-walked into 3000: every value is hit exactly once
    OrderIds.Permutation p = new OrderIds.Permutation(KEY, 6, 3000);
    boolean[] hit = new boolean[3000];
    for (long n = 0; n < 3000; n++) {
      long x = p.apply(n);
      assertTrue(x >= 0 && x < 3000, n + " → " + x);
      assertTrue(!hit[(int) x], "two numbers give " + x);
      hit[(int) x] = true;
      assertEquals(n, p.invert(x));
    }
  }

  @Test
  void aSampleOfNumbersGivesDistinctIdsThatMapBack() {
    Set<String> seen = new HashSet<>();
    for (long n = 1; n <= 20_000; n++) {
      String id = ids.id(n);
      assertTrue(seen.add(id), "id " + id + " twice");
      assertEquals(n, ids.seqOf(id));
    }
    java.util.Random random = new java.util.Random(7);
    for (int i = 0; i < 2_000; i++) {
      long n = Math.floorMod(random.nextLong(), OrderIds.SPACE);
      assertEquals(n, ids.seqOf(ids.id(n)), "number " + n);
    }
  }

  @Test
  void theSameKeyGivesTheSameIdsAndAnotherKeyOthers() {
    OrderIds again = new OrderIds(KEY.clone());
    OrderIds other = new OrderIds(OTHER_KEY);
    int same = 0;
    for (long n = 1; n <= 1_000; n++) {
      assertEquals(ids.id(n), again.id(n));
      if (ids.id(n).equals(other.id(n))) same++;
    }
    assertEquals(0, same, "another key gives other ids");
  }

  @Test
  void consecutiveNumbersGiveIdsFarApart() {
    long closest = Long.MAX_VALUE;
    int ascending = 0;
    for (long n = 1; n <= 1_000; n++) {
      long a = number(ids.id(n));
      long b = number(ids.id(n + 1));
      closest = Math.min(closest, Math.abs(b - a));
      if (b > a) ascending++;
    }
    assertTrue(closest > 1_000, "the closest two consecutive numbers' ids are " + closest + " apart");
    assertTrue(ascending > 400 && ascending < 600, "ids rise and fall at random: " + ascending + " of 1000 rose");
  }

  @Test
  void numbersOutsideTwelveDigitsAndShortKeysAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> ids.id(-1));
    assertThrows(IllegalArgumentException.class, () -> ids.id(OrderIds.SPACE));
    assertThrows(IllegalArgumentException.class, () -> new OrderIds(new byte[15]));
    assertThrows(IllegalArgumentException.class, () -> ids.seqOf("ord-0001"));
    assertNotEquals(ids.id(1), ids.id(2));
  }

  private static long number(String id) {
    return Long.parseLong(id.substring(4));
  }
}
