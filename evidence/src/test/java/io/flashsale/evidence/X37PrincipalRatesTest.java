package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * per-principal request rates (docs/DESIGN.md §Overload). With writes at one in 5 s
 * (burst {@value #WRITE_BURST}) and reads at one in 2 s (burst {@value #READ_BURST}), one buyer sending creates with fresh keys as fast as it can gets
 * at most the burst plus the rate over the time it took; the rest are 429 RATE_LIMITED with
 * Retry-After and make no order; another buyer is served meanwhile; after Retry-After the first
 * is served again. Its reads are limited the same way, in a bucket of their own.
 */
@Tag("engine-independent") // its claim is about the API's admission, the same on either engine
class X37PrincipalRatesTest {
  /** One write in five seconds: ten creates in a row outrun it on any machine that answers one in half a second. */
  private static final double WRITES_PER_SECOND = 0.2;
  private static final int WRITE_BURST = 3;
  private static final double READS_PER_SECOND = 0.5;
  private static final int READ_BURST = 4;
  private static final int SENT = 10;

  @RegisterExtension static final Stack stack = new Stack().with("rateLimits.enabled", true)
      .with("rateLimits.writesPerSecond", WRITES_PER_SECOND).with("rateLimits.writeBurst", WRITE_BURST)
      .with("rateLimits.readsPerSecond", READS_PER_SECOND).with("rateLimits.readBurst", READ_BURST);
  @RegisterExtension static final Evidence ev = new Evidence("X-37",
      "per-principal rates: a buyer past its rate gets 429 RATE_LIMITED with Retry-After, no order; others served");

  @Test
  void aBuyerPastItsRateIsTurnedAwayAlone() throws Exception {
    stack.sku("sku-x37", 100, 100);
    HttpJson ada = stack.api.login("t1", "user-3701");
    HttpJson bob = stack.api.login("t1", "user-3702");

    Map<Integer, Integer> statuses = new TreeMap<>();
    HttpJson.Reply refused = null;
    HttpJson.Reply lastRefused = null;
    long t = System.nanoTime();
    for (int i = 0; i < SENT; i++) {
      HttpJson.Reply r = Buyers.create(ada, "x37-" + i, "sku-x37", 1);
      statuses.merge(r.status(), 1, Integer::sum);
      if (r.status() == 429 && refused == null) refused = r;
      if (r.status() == 429) lastRefused = r;
    }
    double seconds = (System.nanoTime() - t) / 1e9;
    int created = statuses.getOrDefault(201, 0);
    ev.note(String.format("%d creates in %.2f s: %s", SENT, seconds, statuses));
    ev.check(statuses.keySet().stream().allMatch(s -> s == 201 || s == 429), "every create answered 201 or 429");
    ev.check(created >= WRITE_BURST && created <= WRITE_BURST + (int) Math.ceil(seconds * WRITES_PER_SECOND),
        "admitted: at least the burst, at most the burst plus the rate over the time taken (" + created + ")");
    ev.check(refused != null && Problems.is(refused, 429, "RATE_LIMITED"), "the rest: 429 RATE_LIMITED");
    int retryAfter = refused == null ? 0 : Integer.parseInt(refused.header("Retry-After"));
    ev.check(retryAfter >= 1, "with Retry-After (" + retryAfter + " s)");
    ev.equal((long) created, stack.sql.count("SELECT count(*) FROM orders WHERE subject = 'user-3701'"),
        "one order per admitted create, none for a refused one");

    ev.equal(201, Buyers.create(bob, "x37-bob", "sku-x37", 1).status(), "another buyer is served meanwhile");
    // the last refusal's Retry-After: a token that came during the burst was spent by a later create
    int lastRetryAfter = lastRefused == null ? 0 : Integer.parseInt(lastRefused.header("Retry-After"));
    Thread.sleep(lastRetryAfter * 1_000L);
    ev.equal(201, Buyers.create(ada, "x37-after", "sku-x37", 1).status(),
        "after the last refusal's Retry-After (" + lastRetryAfter + " s) the first buyer is served");

    String id = stack.sql.text("SELECT order_id FROM orders WHERE subject = 'user-3701' LIMIT 1");
    Map<Integer, Integer> reads = new TreeMap<>();
    HttpJson.Reply readRefused = null;
    for (int i = 0; i < SENT; i++) {
      HttpJson.Reply r = ada.get("/orders/" + id);
      reads.merge(r.status(), 1, Integer::sum);
      if (r.status() == 429 && readRefused == null) readRefused = r;
    }
    ev.note("reads: " + reads);
    ev.check(reads.getOrDefault(200, 0) >= READ_BURST, "reads have their own bucket: the burst is served after the writes");
    ev.check(readRefused != null && Problems.is(readRefused, 429, "RATE_LIMITED")
        && readRefused.header("Retry-After") != null, "past it, reads too are 429 RATE_LIMITED with Retry-After");
    ev.equal(200, bob.get("/orders").status(), "another buyer's reads are served");
  }
}
