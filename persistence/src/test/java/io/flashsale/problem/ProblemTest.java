package io.flashsale.problem;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ProblemTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aProblemHasTheRfc9457MembersPlusTheStableCodeAndItsAlias() throws Exception {
    JsonNode p = JSON.readTree(Problem.of(404, "ORDER_NOT_FOUND", "no such order").toJson());
    assertEquals("https://flashsale.dev/problems/order-not-found", p.path("type").asText());
    assertEquals("Not Found", p.path("title").asText());
    assertEquals(404, p.path("status").asInt());
    assertEquals("no such order", p.path("detail").asText());
    assertEquals("ORDER_NOT_FOUND", p.path("code").asText());
    assertEquals("ORDER_NOT_FOUND", p.path("error").asText());
    assertFalse(p.has("parameter"), "no parameter unless one is at fault");
    assertFalse(p.has("message"), "the message is the detail now");
    List<String> names = new ArrayList<>();
    p.fieldNames().forEachRemaining(names::add);
    assertEquals(List.of("type", "title", "status", "detail", "code", "error"), names);
  }

  @Test
  void aRefusedParameterIsNamed() throws Exception {
    JsonNode p = JSON.readTree(Problem.ofParameter(400, "MISSING_PARAMETER", "missing parameter sku", "sku").toJson());
    assertEquals("sku", p.path("parameter").asText());
    assertEquals("Bad Request", p.path("title").asText());
    assertEquals("https://flashsale.dev/problems/missing-parameter", p.path("type").asText());
  }

  @Test
  void onlyErrorStatusesAndTheAliasAlwaysEqualsTheCode() {
    assertThrows(IllegalArgumentException.class, () -> Problem.of(200, "OK", "fine"));
    assertThrows(IllegalArgumentException.class, () -> new Problem(null, null, 400, "x", "A", "B", null));
    assertEquals("Content Too Large", Problem.of(413, "BODY_TOO_LARGE", "x").title());
    assertEquals("Service Unavailable", Problem.of(503, "DATABASE_UNAVAILABLE", "x").title());
  }
}
