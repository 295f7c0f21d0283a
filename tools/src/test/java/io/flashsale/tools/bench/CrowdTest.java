package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** What the crowd's client makes of an answer and a Retry-After (a failure: ClientFailuresTest). */
class CrowdTest {
  @Test
  void anAnswerIsItsOutcomeFieldOrItsStatus() {
    assertEquals("SOLD_OUT", Crowd.outcome(409, "{\"outcome\":\"SOLD_OUT\",\"message\":\"x\"}"));
    assertEquals("HTTP_502", Crowd.outcome(502, "<html>bad gateway</html>"));
    assertEquals("HTTP_500", Crowd.outcome(500, ""));
    assertEquals("HTTP_200", Crowd.outcome(200, "{\"order_id\":\"ord-0001\"}"));
  }

  @Test
  void retryAfterIsBoundedAndDefaultsToOneSecond() {
    assertEquals(3, Crowd.retryAfterSeconds("3"));
    assertEquals(10, Crowd.retryAfterSeconds("120"));
    assertEquals(0, Crowd.retryAfterSeconds("-1"));
    assertEquals(1, Crowd.retryAfterSeconds(null));
    assertEquals(1, Crowd.retryAfterSeconds("Wed, 21 Oct 2026 07:28:00 GMT"));
  }
}
