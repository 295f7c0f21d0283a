package io.flashsale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A channel's error text never reaches the buyer's timeline; the status of its answer does. */
class TimelineCauseTest {
  @Test
  void theChannelsWordsStayOutOfTheTimeline() {
    assertEquals("charge answered 422",
        OrderActivitiesImpl.forTimeline("charge answered 422 {\"error\":\"AMOUNT_MISMATCH\",\"internal\":\"db-7 at 10.0.3.4\"}"));
    assertEquals("charge answered 503", OrderActivitiesImpl.forTimeline("charge answered 503 <html>\nupstream down</html>"));
    assertEquals("charge timeout", OrderActivitiesImpl.forTimeline("charge timeout"));
    assertEquals("charge reply", OrderActivitiesImpl.forTimeline("charge reply"));
    assertEquals("charge never started", OrderActivitiesImpl.forTimeline("charge never started"));
  }
}
