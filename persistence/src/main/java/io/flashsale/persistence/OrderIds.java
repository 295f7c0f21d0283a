package io.flashsale.persistence;

import java.security.InvalidKeyException;
import java.security.NoSuchAlgorithmException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Order ids: "ord-" and twelve digits, a keyed permutation of the order's sequence number (the
 * {@code order_number} sequence, shared by every tenant). Consecutive numbers give unrelated ids,
 * so a buyer's ids say nothing about how many orders others made in between, and without the key
 * no id can be guessed from another; the permutation is a bijection, so every number below
 * 10^12 has an id of its own and no two numbers share one.
 *
 * <p>The permutation is format-preserving: a balanced Feistel network over 40 bits (2^40 &gt;
 * 10^12, 20 bits a half, {@value #ROUNDS} rounds) whose round function is HMAC-SHA256 of the key
 * over the round and the half, cycle-walked (applied again while the value is 10^12 or more,
 * about 1.1 times on average) so the result stays a 12-digit decimal. Pure: the key comes from
 * the caller ({@link OrderIdIssuer} reads it from the database).
 */
public final class OrderIds {
  /** Twelve decimal digits: the numbers with an id are 0 .. SPACE - 1. */
  public static final long SPACE = 1_000_000_000_000L;

  static final int ROUNDS = 8;
  private static final int HALF_BITS = 20;

  private final Permutation permutation;

  /** @param key the secret, at least 16 bytes (the database holds 32) */
  public OrderIds(byte[] key) {
    this.permutation = new Permutation(key, HALF_BITS, SPACE);
  }

  /** The id of sequence number {@code seq}, {@code ord-%012d} of its image. */
  public String id(long seq) {
    return String.format("ord-%012d", permutation.apply(seq));
  }

  /** The sequence number of an id this key issued (the inverse of {@link #id}). */
  long seqOf(String orderId) {
    if (!orderId.matches("ord-[0-9]{12}")) throw new IllegalArgumentException("not an issued order id: " + orderId);
    return permutation.invert(Long.parseLong(orderId.substring(4)));
  }

  /**
   * A Feistel network over 2 × {@code halfBits} bits restricted to 0 .. space - 1 by cycle walking:
   * the network permutes the whole bit range, so following it from a value inside the space until
   * it lands inside again is a permutation of the space (each value's cycle returns to the space).
   * Package-private and parameterised so a test can check a small one exhaustively.
   */
  static final class Permutation {
    private final SecretKeySpec key;
    private final int halfBits;
    private final long halfMask;
    private final long space;

    Permutation(byte[] key, int halfBits, long space) {
      if (key == null || key.length < 16) throw new IllegalArgumentException("an order id key needs at least 16 bytes");
      if (halfBits < 1 || halfBits > 24) throw new IllegalArgumentException("halfBits in 1..24");
      if (space < 1 || space > 1L << (2 * halfBits)) throw new IllegalArgumentException("space beyond the bits");
      this.key = new SecretKeySpec(key.clone(), "HmacSHA256");
      this.halfBits = halfBits;
      this.halfMask = (1L << halfBits) - 1;
      this.space = space;
    }

    long apply(long n) {
      check(n);
      Mac mac = mac();
      long x = n;
      do {
        x = encrypt(mac, x);
      } while (x >= space);
      return x;
    }

    long invert(long x) {
      check(x);
      Mac mac = mac();
      long n = x;
      do {
        n = decrypt(mac, n);
      } while (n >= space);
      return n;
    }

    private void check(long n) {
      if (n < 0 || n >= space) throw new IllegalArgumentException(n + " is outside 0.." + (space - 1));
    }

    private long encrypt(Mac mac, long x) {
      long left = x >>> halfBits;
      long right = x & halfMask;
      for (int round = 0; round < ROUNDS; round++) {
        long next = left ^ round(mac, round, right);
        left = right;
        right = next;
      }
      return (left << halfBits) | right;
    }

    private long decrypt(Mac mac, long x) {
      long left = x >>> halfBits;
      long right = x & halfMask;
      for (int round = ROUNDS - 1; round >= 0; round--) {
        long previous = right ^ round(mac, round, left);
        right = left;
        left = previous;
      }
      return (left << halfBits) | right;
    }

    /** The round function: the first bits of HMAC-SHA256(key, round ‖ half). */
    private long round(Mac mac, int round, long half) {
      mac.update((byte) round);
      mac.update((byte) (half >>> 16));
      mac.update((byte) (half >>> 8));
      mac.update((byte) half);
      byte[] h = mac.doFinal();
      long v = ((h[0] & 0xffL) << 16) | ((h[1] & 0xffL) << 8) | (h[2] & 0xffL);
      return v & halfMask;
    }

    /** A Mac of its own per call: a Mac is not thread-safe, and one id costs a few dozen HMACs at most. */
    private Mac mac() {
      try {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(key);
        return mac;
      } catch (NoSuchAlgorithmException | InvalidKeyException e) {
        throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
      }
    }
  }
}
