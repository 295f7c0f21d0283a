package io.flashsale.tools.bench;

import io.flashsale.launcher.cli.HttpJson;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A crowd's set-up: {@code n} distinct buyers of one tenant, one login each, 16 at a time. It is
 * not measured; a login that failed (a timeout on a machine still busy with the scenario before) is
 * tried again, up to {@link #ATTEMPTS} times, and the set-up fails if one still does.
 */
public final class Logins {
  static final int ATTEMPTS = 3;

  private Logins() {}

  /** The tokens of subjects {@code prefix + 0 .. prefix + (n - 1)}, in that order. */
  public static List<String> of(HttpJson api, String tenant, String prefix, int n) {
    String[] tokens = new String[n]; // written by the login threads, read after their batch ended
    ClosedLoop.Batch logins;
    try {
      logins = ClosedLoop.run(16, n, Duration.ofMinutes(10), i -> {
        for (int attempt = 1; ; attempt++) {
          try {
            tokens[i] = api.login(tenant, prefix + i).token();
            return new Timed("LOGGED_IN", 0);
          } catch (RuntimeException e) {
            if (attempt == ATTEMPTS) throw e;
            try {
              Thread.sleep(200L * attempt);
            } catch (InterruptedException interrupted) {
              Thread.currentThread().interrupt();
              throw e;
            }
          }
        }
      });
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while logging in " + n + " buyers", e);
    } catch (Exception e) {
      throw new IllegalStateException("logging in " + n + " buyers: " + e, e);
    }
    Map<String, Long> failed = logins.results().stream().filter(t -> !t.outcome().equals("LOGGED_IN"))
        .collect(Collectors.groupingBy(Timed::outcome, TreeMap::new, Collectors.counting()));
    if (logins.results().size() != n) {
      throw new IllegalStateException("of " + n + " logins, " + logins.results().size() + " ran within the set-up's bound");
    }
    if (!failed.isEmpty()) {
      throw new IllegalStateException("of " + n + " logins, after " + ATTEMPTS + " attempts each, these failed: " + failed);
    }
    return Arrays.asList(tokens);
  }
}
