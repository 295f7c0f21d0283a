package io.flashsale.launcher.observe;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** An update's request and a plain one, same meter, different tag keys: both reach the scrape. */
class SdkMetricsTest {
  @Test
  void anUpdatesRequestIsServedBesideThePlainOnes() throws Exception {
    try (SdkMetrics metrics = new SdkMetrics()) {
      // the order the SDK met them in the bench: a poll first, then the API's update-with-start
      metrics.scope().tagged(Map.of("operation", "PollWorkflowTaskQueue")).counter("temporal_long_request").inc(1);
      metrics.scope().tagged(Map.of("operation", "ExecuteMultiOperation", SdkMetrics.UPDATE_NAME, "create"))
          .counter("temporal_long_request").inc(1);
      String text = "";
      for (long until = System.nanoTime() + 10_000_000_000L; System.nanoTime() < until; Thread.sleep(100)) {
        text = metrics.scrape();
        if (text.contains("ExecuteMultiOperation") && text.contains("PollWorkflowTaskQueue")) break;
      }
      assertTrue(text.contains("operation=\"ExecuteMultiOperation\"") && text.contains("update_name=\"create\""), text);
      assertTrue(text.contains("operation=\"PollWorkflowTaskQueue\"") && text.contains("update_name=\"none\""), text);
      // the JVM's own meters keep their tags: only the SDK's get the tag its update requests carry
      String jvm = text.lines().filter(l -> l.startsWith("jvm_")).findFirst().orElse("");
      assertTrue(!jvm.isEmpty() && !jvm.contains("update_name"), jvm);
    }
  }

  @Test
  void everyInstancesWarmUpQueueIsOneSeries() throws Exception {
    try (SdkMetrics metrics = new SdkMetrics()) {
      for (String queue : new String[] {"flashsale-warm-up-1a2b3c4d", "flashsale-warm-up-5e6f7a8b", "flashsale-orders"}) {
        metrics.scope().tagged(Map.of(SdkMetrics.TASK_QUEUE, queue)).counter("temporal_workflow_completed").inc(1);
      }
      String text = "";
      for (long until = System.nanoTime() + 10_000_000_000L; System.nanoTime() < until; Thread.sleep(100)) {
        text = metrics.scrape();
        if (text.contains("flashsale-orders")) break;
      }
      java.util.List<String> lines = text.lines().filter(l -> l.startsWith("temporal_workflow_completed")).toList();
      assertTrue(lines.stream().anyMatch(l -> l.contains("task_queue=\"flashsale-warm-up\"") && l.trim().endsWith(" 2.0")), lines.toString());
      assertTrue(lines.stream().noneMatch(l -> l.contains("flashsale-warm-up-")), "no per-instance tag: " + lines);
      assertTrue(lines.stream().anyMatch(l -> l.contains("task_queue=\"flashsale-orders\"")), lines.toString());
    }
  }
}
