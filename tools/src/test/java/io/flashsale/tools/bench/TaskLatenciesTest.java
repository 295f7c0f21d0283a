package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The workflow tasks' split between two scrapes of the SDK's Prometheus text. */
class TaskLatenciesTest {
  private static final String QUEUED = "temporal_workflow_task_schedule_to_start_latency_seconds";
  private static final String RESPOND = "temporal_request_latency_seconds";

  /** Prometheus text as the SDK's registry writes it: two task queues' series of one timer, buckets cumulative. */
  private static String scrape(long fast, long slow, double sum, long responds) {
    String sticky = "task_queue=\"flashsale-orders:sticky\",worker_type=\"WorkflowWorker\"";
    String normal = "task_queue=\"bench-engine-ceiling\",worker_type=\"WorkflowWorker\"";
    return "# HELP " + QUEUED + " \n# TYPE " + QUEUED + " histogram\n"
        + QUEUED + "_bucket{" + normal + ",le=\"0.01\"} " + fast + "\n"
        + QUEUED + "_bucket{" + normal + ",le=\"0.5\"} " + (fast + slow) + "\n"
        + QUEUED + "_bucket{" + normal + ",le=\"+Inf\"} " + (fast + slow) + "\n"
        + QUEUED + "_count{" + normal + "} " + (fast + slow) + "\n"
        + QUEUED + "_sum{" + normal + "} " + sum + "\n"
        + QUEUED + "_bucket{" + sticky + ",le=\"0.01\"} 1\n"
        + QUEUED + "_bucket{" + sticky + ",le=\"0.5\"} 1\n"
        + QUEUED + "_bucket{" + sticky + ",le=\"+Inf\"} 1\n"
        + QUEUED + "_count{" + sticky + "} 1\n"
        + QUEUED + "_sum{" + sticky + "} 0.005\n"
        + RESPOND + "_count{operation=\"RespondWorkflowTaskCompleted\"} " + responds + "\n"
        + RESPOND + "_sum{operation=\"RespondWorkflowTaskCompleted\"} " + responds * 0.01 + "\n"
        + RESPOND + "_count{operation=\"PollWorkflowTaskQueue\"} 999\n"
        + RESPOND + "_sum{operation=\"PollWorkflowTaskQueue\"} 999\n";
  }

  @Test
  void theWindowIsTheDifferenceAndAPercentileIsItsBucketsUpperBound() {
    TaskLatencies.Scrape before = TaskLatencies.parse(scrape(100, 0, 0.5, 10));
    // 200 more tasks in the window: 197 fast, 3 slow (above the 99th rank: 198 of 200)
    TaskLatencies.Scrape after = TaskLatencies.parse(scrape(297, 3, 0.5 + 1.2 + 0.9, 30));
    Map<String, TaskLatencies.Timer> w = TaskLatencies.between(before, after);

    TaskLatencies.Timer queued = w.get(TaskLatencies.QUEUED);
    assertEquals(200, queued.count(), "both task queues' series are added up, only the window counts");
    assertEquals(1000 * (1.2 + 0.9) / 200, queued.meanMs(), 1e-9);
    assertEquals(500, queued.p99Ms(), 1e-9, "the 198th of 200 lies in the 0.5 s bucket");

    assertEquals(200, w.get("of them on the task queue").count(), "the task queue's series alone");
    assertFalse(w.containsKey("on the sticky queue"), "the sticky series did not move in the window");

    TaskLatencies.Timer completing = w.get("completing");
    assertEquals(20, completing.count(), "only RespondWorkflowTaskCompleted, not the polls");
    assertEquals(10, completing.meanMs(), 1e-9);
    assertFalse(w.containsKey("executing"), "a timer with nothing in the window is left out");
  }

  @Test
  void aWindowWithinTheFirstBucketAndADescription() {
    TaskLatencies.Scrape before = TaskLatencies.parse(scrape(0, 0, 0, 0));
    TaskLatencies.Scrape after = TaskLatencies.parse(scrape(50, 0, 0.25, 0));
    TaskLatencies.Timer queued = TaskLatencies.between(before, after).get(TaskLatencies.QUEUED);
    assertEquals(10, queued.p99Ms(), 1e-9);
    String line = TaskLatencies.describe(TaskLatencies.between(before, after));
    assertTrue(line.startsWith("queued for a poller 5.0 / 10 ms (50)"), line);
    assertEquals("no workflow task timed", TaskLatencies.describe(Map.of()));
  }

  @Test
  void aPercentileBeyondTheLastBucketAndValuesWithExponents() {
    String q = "{task_queue=\"flashsale-orders\"";
    String before = QUEUED + "_bucket" + q + ",le=\"0.01\"} 0\n" + QUEUED + "_bucket" + q + ",le=\"+Inf\"} 0\n"
        + QUEUED + "_count" + q + "} 0\n" + QUEUED + "_sum" + q + "} 0.0\n";
    // the registry writes large counts and sums with an exponent
    String after = QUEUED + "_bucket" + q + ",le=\"0.01\"} 1.0\n" + QUEUED + "_bucket" + q + ",le=\"+Inf\"} 1.0E2\n"
        + QUEUED + "_count" + q + "} 1.0E2\n" + QUEUED + "_sum" + q + "} 1.5e+03\n";
    Map<String, TaskLatencies.Timer> w = TaskLatencies.between(TaskLatencies.parse(before), TaskLatencies.parse(after));
    TaskLatencies.Timer queued = w.get(TaskLatencies.QUEUED);
    assertEquals(100, queued.count());
    assertEquals(15_000, queued.meanMs(), 1e-9);
    assertTrue(Double.isInfinite(queued.p99Ms()), "the 99th of 100 is past the last finite bucket");
    assertTrue(TaskLatencies.describe(w).startsWith("queued for a poller 15000.0 / beyond the last bucket (100)"),
        TaskLatencies.describe(w));
  }
}
