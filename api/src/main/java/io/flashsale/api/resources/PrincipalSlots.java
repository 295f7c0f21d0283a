package io.flashsale.api.resources;

import io.flashsale.api.auth.Caller;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;

/**
 * Slots of a bounded resource (open event streams, running exports): a global cap and a share per
 * principal, so one token cannot take them all. The global cap is checked first, so a full
 * service still answers its 503; a principal at its share gets 429.
 */
final class PrincipalSlots {
  /** Why a slot was not given. */
  enum Refusal { SERVICE_FULL, PRINCIPAL_FULL }

  /** A held slot (give it back once, with {@link #release}), or the refusal. */
  static final class Slot {
    private final PrincipalSlots owner;
    private final String principal;
    private final Refusal refusal;
    private boolean released;

    private Slot(PrincipalSlots owner, String principal, Refusal refusal) {
      this.owner = owner;
      this.principal = principal;
      this.refusal = refusal;
    }

    boolean held() {
      return refusal == null;
    }

    Refusal refusal() {
      return refusal;
    }

    synchronized void release() {
      if (!held() || released) return;
      released = true;
      owner.perPrincipal.computeIfPresent(principal, (k, n) -> n <= 1 ? null : n - 1);
      owner.global.release();
    }
  }

  private final Semaphore global;
  private final int max;
  private final int share;
  private final ConcurrentHashMap<String, Integer> perPrincipal = new ConcurrentHashMap<>();

  PrincipalSlots(int max, int share) {
    this.global = new Semaphore(max);
    this.max = max;
    this.share = Math.max(1, share);
  }

  Slot tryAcquire(Caller caller) {
    if (!global.tryAcquire()) return new Slot(this, null, Refusal.SERVICE_FULL);
    String principal = caller.tenant() + "/" + caller.subject();
    boolean[] took = new boolean[1];
    perPrincipal.compute(principal, (k, n) -> {
      int held = n == null ? 0 : n;
      if (held >= share) return n;
      took[0] = true;
      return held + 1;
    });
    if (!took[0]) {
      global.release();
      return new Slot(this, null, Refusal.PRINCIPAL_FULL);
    }
    return new Slot(this, principal, null);
  }

  /** Slots held right now. */
  int inUse() {
    return max - global.availablePermits();
  }
}
