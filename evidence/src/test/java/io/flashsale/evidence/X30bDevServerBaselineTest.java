package io.flashsale.evidence;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * X-30b: X-30's clean sale, the same fleet (API A and B, two worker processes, one relay, payloads
 * encrypted) and the same crowd, on the temporal CLI's dev server with its SQLite in a file: the
 * baseline the Temporal server's FIGURES line is read against (evidence/bench/PERFORMANCE.md).
 */
@Tag("dev-server-only")
class X30bDevServerBaselineTest {
  @RegisterExtension static final Evidence ev = new Evidence("X-30b",
      "X-30's clean sale on the dev server (SQLite file): the baseline of the production shape's figures");

  // "" is the default: the dev server's SQLite in a file in the data folder (the experiments' default is in memory)
  private final Stack stack = ProductionFleet.stack().with("temporal.devServerDbFile", "");

  @Test
  void theSameSaleOnTheDevServer() throws Exception {
    try {
      stack.startFresh("X30b");
      long devServer = ProcessHandle.current().descendants()
          .filter(p -> p.info().commandLine().orElse("").contains("start-dev")).findFirst()
          .orElseThrow(() -> new AssertionError("no dev server process under this JVM")).pid();
      try (ProductionFleet fleet = ProductionFleet.start(stack, ev, "127.0.0.1:" + stack.temporalPort, Map.of())) {
        ev.note("dev server pid " + devServer + "; " + fleet.describe());
        fleet.warmUp();
        fleet.cleanSale("dev server (SQLite file)", () -> devServer, 0);
        fleet.eventsReachedTheConsumerOnce();
        stack.checkReconcileClean(ev, "reconcile clean");
      }
    } finally {
      stack.stop();
    }
  }
}
