package io.flashsale.reconciliation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.ScheduleOverlapPolicy;
import io.temporal.client.schedules.Schedule;
import io.temporal.client.schedules.SchedulePolicy;
import io.temporal.client.schedules.ScheduleSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ScheduledReconciliationTest {

  @Test
  void findingsAreCountedByKind() {
    assertEquals(Map.of(), ScheduledReconciliation.findingsByKind(List.of()));
    assertEquals(Map.of("ORPHAN", 2, "WORKFLOW_MISMATCH", 1, "GLOBAL", 2, "PAID_NOT_CHARGED", 1, "NO_EVENT", 1),
        ScheduledReconciliation.findingsByKind(List.of(
            "ord-1 PAYING ORPHAN workflow TERMINATED",
            "ord-2 CREATED ORPHAN no workflow",
            "ord-3 PAID WORKFLOW_MISMATCH workflow=PAYING v2 row=PAID v3",
            "ord-4 PAID PAID_NOT_CHARGED,NO_EVENT charged=0 refunded=0 reservation=CONFIRMED",
            "GLOBAL confirmed=1 != paid=0",
            "GLOBAL conservation drift=1")));
  }

  @Test
  void desiredScheduleIsAnIntervalWithOverlapSkip() {
    Schedule s = ReconcileSchedule.desired(Duration.ofMinutes(5));
    assertEquals(ScheduleOverlapPolicy.SCHEDULE_OVERLAP_POLICY_SKIP, s.getPolicy().getOverlap());
    assertEquals(Duration.ofMinutes(5), s.getSpec().getIntervals().get(0).getEvery());
    assertThrows(IllegalArgumentException.class, () -> ReconcileSchedule.desired(Duration.ZERO));
  }

  @Test
  void aScheduleAgreesOnlyWithTheSameIntervalPolicyAndAction() {
    Schedule want = ReconcileSchedule.desired(Duration.ofMinutes(5));
    assertTrue(ReconcileSchedule.agrees(ReconcileSchedule.desired(Duration.ofMinutes(5)), want));
    assertFalse(ReconcileSchedule.agrees(ReconcileSchedule.desired(Duration.ofMinutes(1)), want));
    // as described by the engine: the phase is zero, not absent
    assertTrue(ReconcileSchedule.agrees(Schedule.newBuilder(want).setSpec(ScheduleSpec.newBuilder(want.getSpec())
        .setIntervals(List.of(new io.temporal.client.schedules.ScheduleIntervalSpec(Duration.ofMinutes(5),
            Duration.ZERO))).build()).build(), want));
    assertFalse(ReconcileSchedule.agrees(Schedule.newBuilder(want).setSpec(ScheduleSpec.newBuilder(want.getSpec())
        .setIntervals(List.of(new io.temporal.client.schedules.ScheduleIntervalSpec(Duration.ofMinutes(5),
            Duration.ofSeconds(30)))).build()).build(), want), "another phase is brought back");
    assertFalse(ReconcileSchedule.agrees(Schedule.newBuilder(want)
        .setPolicy(SchedulePolicy.newBuilder(want.getPolicy())
            .setOverlap(ScheduleOverlapPolicy.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL).build())
        .build(), want), "another overlap policy is brought back to SKIP");
    assertFalse(ReconcileSchedule.agrees(Schedule.newBuilder(want)
        .setSpec(ScheduleSpec.newBuilder(want.getSpec()).setCronExpressions(List.of("0 * * * *")).build())
        .build(), want), "a cron added by hand is removed");
  }
}
