package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.text.NumberFormat;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The arithmetic behind the benchmark report: which latencies count, their percentiles, the medians over runs. */
class StatsTest {
  private static final long MS = 1_000_000;

  @Test
  void latenciesAreThoseOfOneOutcomeInAscendingOrder() {
    List<Timed> results = List.of(
        new Timed("CREATED", 30 * MS),
        new Timed("SOLD_OUT", 2 * MS),
        new Timed("CREATED", 10 * MS),
        new Timed("HTTP_503", 1 * MS), // no outcome in the answer: counted as neither
        new Timed("CREATED", 20 * MS));

    assertEquals(List.of(10 * MS, 20 * MS, 30 * MS), Stats.latencies(results, "CREATED"));
    assertEquals(List.of(2 * MS), Stats.latencies(results, "SOLD_OUT"));
    assertEquals(List.of(), Stats.latencies(results, "PAID"));
  }

  @Test
  void percentilesOfAHundredLatenciesAreTheirRanksInMilliseconds() {
    List<Long> oneToAHundredMs = LongStream.rangeClosed(1, 100).map(i -> i * MS).boxed().toList();

    assertEquals(1.0, Stats.pct(oneToAHundredMs, 1));
    assertEquals(50.0, Stats.pct(oneToAHundredMs, 50));
    assertEquals(99.0, Stats.pct(oneToAHundredMs, 99));
    assertEquals(100.0, Stats.pct(oneToAHundredMs, 100));
  }

  @Test
  void aSingleLatencyIsEveryPercentileAndNoneIsNaN() {
    assertEquals(7.5, Stats.pct(List.of(7_500_000L), 50));
    assertEquals(7.5, Stats.pct(List.of(7_500_000L), 99));
    // NaN, not 0: an outcome nobody got must not read as instant
    assertTrue(Double.isNaN(Stats.pct(List.of(), 50)));
  }

  /** Nearest rank: the smallest latency with at least p% of all at or below it. */
  @ParameterizedTest
  @ValueSource(ints = {1, 10, 50, 90, 95, 99, 100})
  void aPercentileIsTheNearestRank(int p) {
    Random random = new Random(p);
    for (int size = 1; size <= 300; size++) {
      List<Long> sorted = distinctLatencies(random, size);
      long at = Math.round(Stats.pct(sorted, p) * MS);

      long atOrBelow = sorted.stream().filter(x -> x <= at).count();
      long below = sorted.stream().filter(x -> x < at).count();
      assertTrue(sorted.contains(at), "a measured latency");
      assertTrue(100 * atOrBelow >= (long) p * size, "p" + p + " of " + size + ": at least p% at or below");
      assertTrue(100 * below < (long) p * size, "p" + p + " of " + size + ": the smallest such latency");
    }
  }

  private static List<Long> distinctLatencies(Random random, int size) {
    List<Long> l = new ArrayList<>();
    long next = 0;
    for (int i = 0; i < size; i++) {
      next += 1 + random.nextInt(1000);
      l.add(next * MS);
    }
    Collections.sort(l);
    return l;
  }

  @Test
  void theMedianOfAnOddNumberOfRunsIsTheMiddleOne() {
    assertEquals(20.0, Stats.median(List.of(30.0, 10.0, 20.0)));
    assertEquals(4.0, Stats.median(List.of(4.0)));
  }

  @Test
  void theMedianOfAnEvenNumberOfRunsIsTheMeanOfTheMiddleTwo() {
    assertEquals(25.0, Stats.median(List.of(40.0, 10.0, 30.0, 20.0)));
  }

  @Test
  void aRunWhereNobodyGotTheOutcomeDoesNotCountInTheMedian() {
    assertEquals(15.0, Stats.median(List.of(10.0, Double.NaN, 20.0)));
    assertTrue(Double.isNaN(Stats.median(List.of(Double.NaN))));
  }

  @Test
  void outcomesAreCountedInOrderOfFirstAppearance() {
    List<Timed> results = List.of(new Timed("CREATED", 1), new Timed("HTTP_503", 1), new Timed("CREATED", 1));

    assertEquals(List.of("CREATED", "HTTP_503"), List.copyOf(Stats.outcomes(results).keySet()));
    assertEquals(2L, Stats.outcomes(results).get("CREATED"));
  }

  @Test
  void aSummaryLineIsTheMetricAndTheMedianOfItsRunsInFixedColumns() throws ParseException {
    String line = Stats.medianLine("B1 created/s", List.of(55.8, 44.7, 52.9));

    // two spaces, the metric padded to 34, a space, the value right-aligned in 10: the medians line up
    assertEquals(47, line.length(), line);
    assertEquals("B1 created/s", line.substring(2, 36).strip());
    assertEquals(52.9, NumberFormat.getInstance().parse(line.substring(37).strip()).doubleValue());
    assertEquals(line.length(), Stats.medianLine("B1 ratio http/jdbc x1000", List.of(144.1)).length());
  }
}
