package io.flashsale.api.resources;

import io.flashsale.api.auth.Caller;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongSupplier;

/**
 * How many creates may wait on the engine at once (docs/DESIGN.md §Overload). By Little's law a
 * create admitted behind N others waits about N / C, C being the rate at which the engine finishes
 * creates. Under overload C is the engine's ceiling, so the bound is {@code C x budget}: an
 * admitted create is answered within about the budget, far inside the engine call's deadline, and
 * every create past the bound is refused at once (503, Retry-After) instead of waiting in a queue
 * until its client gives up. C is measured here, over the last {@link #WINDOW_NANOS}. A service
 * that neither refused a create at the bound nor answered many past their deadline (a quarter of
 * the floor of them) in the last window admits at least {@code floor} (a quiet or cold service takes
 * a burst of that many, since its C measures its demand, not the engine); one that did is at its
 * ceiling, so C is the engine's and the bound follows it down to a quarter of the floor, at least 4
 * (docs/DESIGN.md §Overload, "The floor, quiet and under load"). It never rises above {@code max}
 * (maxCreatesInFlight). Under the bound each principal has a share
 * (maxCreatesInFlightPerPrincipal), so one token cannot hold every place while others wait.
 */
public final class CreateAdmission {
  /** The completion rate is counted over this window, in buckets of a tenth of it. */
  static final long WINDOW_NANOS = 2_000_000_000L;
  private static final int BUCKETS = 10;
  private static final long BUCKET_NANOS = WINDOW_NANOS / BUCKETS;

  private final int floor;
  /** The bound's floor while the service is refusing creates: the measured C rules, not the burst floor. */
  private final int loadedFloor;
  private final int max;
  private final double budgetSeconds;
  private final LongSupplier nanoTime;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final int share;
  /** Creates in flight per principal ("tenant/subject"); a principal with none has no entry. */
  private final ConcurrentHashMap<String, Integer> perPrincipal = new ConcurrentHashMap<>();

  /** What {@link #tryAdmit(Caller)} decided. */
  public enum Admission {
    ADMITTED,
    /** The bound is reached: 503 OVERLOADED for everyone. */
    OVERLOADED,
    /** This principal holds its share: 429 for it, others are still admitted. */
    PRINCIPAL_SHARE_USED
  }
  /**
   * Completions per bucket; {@code bucketStart[i]} says which bucket period slot i holds. Without a
   * lock: every create asks the bound, and a crowd's request threads queued on a monitor here (44 s
   * blocked in one B4 run). A completion counted as its bucket turns over may be lost: the rate is
   * an estimate either way.
   */
  private final AtomicLongArray completions = new AtomicLongArray(BUCKETS);
  private final AtomicLongArray bucketStart = new AtomicLongArray(BUCKETS);
  /**
   * When the service last found itself under load (nanoTime): a create refused at the bound, or the
   * last of {@code loadedFloor} creates answered past their deadline within a window; a window
   * before the start at first.
   */
  private final AtomicLong lastOverload;
  /**
   * When the last {@code loadedFloor} creates were answered past their deadline (nanoTime), a ring.
   * One late answer is a slow engine (a cold one in its first seconds): bounding by its rate would
   * only refuse the buyers behind it; a queue past the deadline makes many late at once.
   */
  private final long[] deadlineMisses;
  private int nextMiss;

  /** A fixed bound of {@code max} creates in flight (budget 0: no rate-derived bound). */
  public static CreateAdmission fixed(int max) {
    return new CreateAdmission(max, max, 0, max, System::nanoTime);
  }

  public CreateAdmission(int floor, int max, long budgetMillis, int sharePerPrincipal) {
    this(floor, max, budgetMillis, sharePerPrincipal, System::nanoTime);
  }

  CreateAdmission(int floor, int max, long budgetMillis, LongSupplier nanoTime) {
    this(floor, max, budgetMillis, max, nanoTime);
  }

  CreateAdmission(int floor, int max, long budgetMillis, int sharePerPrincipal, LongSupplier nanoTime) {
    this.share = Math.max(1, sharePerPrincipal);
    this.floor = Math.min(floor, max);
    // a small bound keeps its floor: a quarter of 2 would leave a create's place racing its answer
    this.loadedFloor = Math.max(Math.min(this.floor, 4), this.floor / 4);
    this.max = max;
    this.budgetSeconds = budgetMillis / 1000.0;
    this.nanoTime = nanoTime;
    this.lastOverload = new AtomicLong(nanoTime.getAsLong() - 2 * WINDOW_NANOS);
    this.deadlineMisses = new long[loadedFloor];
    java.util.Arrays.fill(deadlineMisses, lastOverload.get());
  }

  /** Room for one more create under the bound now: take it (and {@link #done} it), or be refused. */
  public boolean tryAdmit() {
    int bound = bound();
    while (true) {
      int n = inFlight.get();
      if (n >= bound) {
        refused();
        return false;
      }
      if (inFlight.compareAndSet(n, n + 1)) return true;
    }
  }

  /**
   * A place under the bound and within the caller's share: take it (and {@link #done(Caller,
   * boolean)} it), or be refused. The bound is checked first, so an overloaded service answers
   * everyone its 503; a principal at its share gets 429.
   */
  public Admission tryAdmit(Caller caller) {
    if (!tryAdmit()) return Admission.OVERLOADED;
    boolean[] took = new boolean[1];
    perPrincipal.compute(principal(caller), (k, n) -> {
      int held = n == null ? 0 : n;
      if (held >= share) return n;
      took[0] = true;
      return held + 1;
    });
    if (took[0]) return Admission.ADMITTED;
    inFlight.decrementAndGet();
    return Admission.PRINCIPAL_SHARE_USED;
  }

  /** An admitted create of the caller ended: its place and its share's place are free. */
  public void done(Caller caller, boolean engineAnswered) {
    perPrincipal.computeIfPresent(principal(caller), (k, n) -> n <= 1 ? null : n - 1);
    done(engineAnswered);
  }

  private static String principal(Caller caller) {
    return caller.tenant() + "/" + caller.subject();
  }

  /** No room under the bound now: a create would be refused. A look only; {@link #tryAdmit} decides. */
  public boolean full() {
    return inFlight.get() >= bound();
  }

  /** An admitted create ended (answered or failed): it frees its place and counts toward the rate. */
  public void done(boolean engineAnswered) {
    inFlight.decrementAndGet();
    if (engineAnswered) count(nanoTime.getAsLong());
  }

  /**
   * The bound right now: the measured completion rate times the budget, within [floor, max]; within
   * [floor / 4 (at least 4, or the floor when smaller), max] while the service is {@link #underLoad under load}.
   */
  public int bound() {
    if (budgetSeconds <= 0) return max;
    long derived = (long) Math.ceil(completionsPerSecond() * budgetSeconds);
    return (int) Math.max(underLoad() ? loadedFloor : floor, Math.min(max, derived));
  }

  /**
   * A create was refused at the bound before it asked for a place ({@link #full}): demand is past
   * the bound, so the measured rate rules.
   */
  public void refused() {
    lastOverload.set(nanoTime.getAsLong());
  }

  /**
   * An admitted create was answered past its deadline (503, its call still going). When the last
   * {@code loadedFloor} of them all came within a window, the creates in flight are a longer queue
   * than the engine finishes in time (64 closed-loop clients, never refused, show it so), and the
   * measured rate rules.
   */
  public synchronized void missedDeadline() { // rare; two at once must not read each other's slot
    long now = nanoTime.getAsLong();
    int slot = nextMiss;
    nextMiss = (slot + 1) % deadlineMisses.length;
    deadlineMisses[slot] = now;
    long oldest = deadlineMisses[nextMiss]; // the slot written longest ago
    if (now - oldest < WINDOW_NANOS) lastOverload.set(now);
  }

  /**
   * A create was refused at the bound, or {@code loadedFloor} were answered past their deadline,
   * within the last window: demand is past what the engine finishes.
   */
  boolean underLoad() {
    return nanoTime.getAsLong() - lastOverload.get() < WINDOW_NANOS;
  }

  public int inFlight() {
    return inFlight.get();
  }

  /** Creates the engine finished per second over the last window. */
  public double completionsPerSecond() {
    long now = nanoTime.getAsLong();
    long current = Math.floorDiv(now, BUCKET_NANOS);
    long sum = 0;
    for (int i = 0; i < BUCKETS; i++) {
      if (current - bucketStart.get(i) < BUCKETS) sum += completions.get(i);
    }
    return sum / (WINDOW_NANOS / 1e9);
  }

  private void count(long now) {
    long period = Math.floorDiv(now, BUCKET_NANOS);
    int slot = (int) Math.floorMod(period, (long) BUCKETS);
    long held = bucketStart.get(slot);
    if (held != period && bucketStart.compareAndSet(slot, held, period)) completions.set(slot, 0);
    completions.incrementAndGet(slot);
  }
}
