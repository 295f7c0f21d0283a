package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Arrivals keep their schedule whatever the server does, and latency counts from each arrival. */
class OpenLoopTest {
  @Test
  void aServerSlowerThanTheArrivalsShowsAsGrowingLatencyNotAsFewerRequests() throws Exception {
    Object oneAtATime = new Object();
    // a server that answers one request per 20 ms, offered 100 arrivals/s: twice its capacity
    ClosedLoop.Batch b = OpenLoop.run(100, 20, Duration.ofSeconds(30), i -> {
      synchronized (oneAtATime) {
        sleep(20);
      }
      return new Timed("OK", 0);
    });
    assertEquals(20, b.results().size());
    assertTrue(b.results().stream().allMatch(t -> t.outcome().equals("OK")), b.results().toString());
    List<Long> ms = b.results().stream().map(t -> t.nanos() / 1_000_000).sorted(Comparator.naturalOrder()).toList();
    System.out.println("open-loop latencies ms: " + ms + " over " + b.seconds() + " s");
    // 20 answers need >= 400 ms of service; the last arrival is due at 190 ms, so it waits >= 210 ms
    assertTrue(ms.get(ms.size() - 1) >= 200, "the queue shows in the latency: " + ms);
    assertTrue(b.seconds() >= 0.4, "every request was served: " + b.seconds());
  }

  @Test
  void arrivalsPastTheOutstandingBoundAreCountedNotSent() throws Exception {
    // 10 arrivals within 9 ms, each answered after 1 s: the three outstanding ones hold the bound
    ClosedLoop.Batch b = OpenLoop.run(1_000, 10, Duration.ofSeconds(30), 3, i -> {
      sleep(1_000);
      return new Timed("OK", 0);
    });
    long backlog = b.results().stream().filter(t -> t.outcome().equals(OpenLoop.BACKLOG)).count();
    System.out.println("open loop with 3 outstanding: " + Stats.outcomes(b.results()));
    assertEquals(10, b.results().size());
    assertTrue(backlog >= 1, "arrivals with 3 unanswered were not sent: " + Stats.outcomes(b.results()));
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
