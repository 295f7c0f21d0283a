package io.flashsale.api.tasks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.persistence.Principals;
import io.flashsale.persistence.Skus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Task parameters are checked before the database is touched (the stores here have none, so a
 * call that got past validation would fail with a NullPointerException), and a refusal is a JSON
 * 4xx with a stable code through the filter's writer.
 */
class AdminTaskTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static Map<String, List<String>> params(String... kv) {
    Map<String, List<String>> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.computeIfAbsent(kv[i], k -> new java.util.ArrayList<>()).add(kv[i + 1]);
    return m;
  }

  private static TaskError refused(AdminTask task, String... kv) {
    return assertThrows(TaskError.class, () -> task.execute(params(kv), new PrintWriter(new StringWriter())));
  }

  private static void assertRefused(int status, String code, String parameter, TaskError e) {
    assertEquals(status, e.status(), e.getMessage());
    assertEquals(code, e.code(), e.getMessage());
    assertEquals(parameter, e.parameter(), e.getMessage());
  }

  private static final SkuTask SKU = new SkuTask(new Skus(null));
  private static final RevokeTask REVOKE = new RevokeTask(new Principals(null));
  private static final UnrevokeTask UNREVOKE = new UnrevokeTask(new Principals(null));
  private static final ReconcileTask RECONCILE = new ReconcileTask(null, null, null);

  /** One refused call: what it shows, the task, the refusal's code and parameter, the query as name, value, ... */
  private static Arguments refusal(String what, AdminTask task, String code, String parameter, String... kv) {
    return Arguments.of(what, task, code, parameter, kv);
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        // non-numeric values are invalid parameters
        refusal("a word as total", SKU, "INVALID_PARAMETER", "total", "tenant", "t1", "sku", "s1", "total", "ten"),
        refusal("a negative total", SKU, "INVALID_PARAMETER", "total", "tenant", "t1", "sku", "s1", "total", "-1"),
        refusal("an exponent as total", SKU, "INVALID_PARAMETER", "total", "tenant", "t1", "sku", "s1", "total", "1e3"),
        refusal("a total past 64 bits", SKU, "INVALID_PARAMETER", "total",
            "tenant", "t1", "sku", "s1", "total", "99999999999999999999999"),
        refusal("a decimal price", SKU, "INVALID_PARAMETER", "unit_price",
            "tenant", "t1", "sku", "s1", "total", "5", "unit_price", "19.90"),
        refusal("a word as limit", SKU, "INVALID_PARAMETER", "per_user_limit",
            "tenant", "t1", "sku", "s1", "total", "5", "per_user_limit", "three"),
        // zero price and zero limit are refused
        refusal("a zero price", SKU, "INVALID_PARAMETER", "unit_price",
            "tenant", "t1", "sku", "s1", "total", "5", "unit_price", "0"),
        refusal("a zero limit", SKU, "INVALID_PARAMETER", "per_user_limit",
            "tenant", "t1", "sku", "s1", "total", "5", "per_user_limit", "0"),
        // SKU, tenant and subject names follow the API's patterns
        refusal("a SKU with a space and a bang", SKU, "INVALID_PARAMETER", "sku", "tenant", "t1", "sku", "bad sku!", "total", "5"),
        refusal("a SKU of 65 characters", SKU, "INVALID_PARAMETER", "sku", "tenant", "t1", "sku", "x".repeat(65), "total", "5"),
        refusal("a SKU with a quote", SKU, "INVALID_PARAMETER", "sku", "tenant", "t1", "sku", "s'1", "total", "5"),
        refusal("a tenant with a space", SKU, "INVALID_PARAMETER", "tenant", "tenant", "t 1", "sku", "s1", "total", "5"),
        refusal("a subject with a slash", REVOKE, "INVALID_PARAMETER", "subject", "tenant", "t1", "subject", "u/1"),
        refusal("a subject with a NUL", UNREVOKE, "INVALID_PARAMETER", "subject", "tenant", "t1", "subject", "u\u00001"),
        // missing, unknown and repeated parameters
        refusal("no total", SKU, "MISSING_PARAMETER", "total", "tenant", "t1", "sku", "s1"),
        refusal("an empty total", SKU, "MISSING_PARAMETER", "total", "tenant", "t1", "sku", "s1", "total", ""),
        refusal("no tenant", REVOKE, "MISSING_PARAMETER", "tenant", "subject", "u1"),
        refusal("a misspelt parameter", SKU, "UNKNOWN_PARAMETER", "per_user_limt",
            "tenant", "t1", "sku", "s1", "total", "5", "per_user_limt", "2"),
        refusal("a repeated total", SKU, "INVALID_PARAMETER", "total", "tenant", "t1", "sku", "s1", "total", "5", "total", "6"),
        // the reconcile task's parameters are checked too
        refusal("repair that is no boolean", RECONCILE, "INVALID_PARAMETER", "repair", "repair", "yes"),
        refusal("an unknown format", RECONCILE, "INVALID_PARAMETER", "format", "format", "xml"),
        refusal("a misspelt reconcile parameter", RECONCILE, "UNKNOWN_PARAMETER", "repiar", "repiar", "true"));
  }

  @ParameterizedTest(name = "{0}: {2} {3}")
  @MethodSource("refusals")
  void aParameterThatIsMissingUnknownRepeatedOrInvalidIsRefusedAs400WithItsCodeAndName(String what, AdminTask task,
      String code, String parameter, String[] kv) {
    assertRefused(400, code, parameter, refused(task, kv));
  }

  @Test
  void aZeroPriceIsRefusedWithTheRangeItMustBeIn() {
    TaskError e = refused(SKU, "tenant", "t1", "sku", "s1", "total", "5", "unit_price", "0");
    assertTrue(e.getMessage().contains("1.."), e.getMessage());
  }

  @Test
  void retiringATokenKeyNamesAConfiguredKeyOtherThanTheSigningOne() throws Exception {
    io.flashsale.api.auth.TokenService tokens = new io.flashsale.api.auth.TokenService(
        Map.of("k1", "secret-one", "k2", "secret-two"), "k2", 60, java.time.Clock.systemUTC());
    RetireTokenKeyTask retire = new RetireTokenKeyTask(tokens);
    assertRefused(400, "MISSING_PARAMETER", "keyId", refused(retire));
    assertRefused(400, "INVALID_PARAMETER", "keyId", refused(retire, "keyId", "k.1"));
    assertRefused(409, "SIGNING_KEY", "keyId", refused(retire, "keyId", "k2"));
    assertRefused(404, "UNKNOWN_KEY", "keyId", refused(retire, "keyId", "k9"));
    StringWriter out = new StringWriter();
    retire.execute(params("keyId", "k1"), new PrintWriter(out));
    assertTrue(out.toString().contains("retired token key k1"), out.toString());
    assertRefused(404, "UNKNOWN_KEY", "keyId", refused(retire, "keyId", "k1"));
  }

  @Test
  void throughTheFilterARefusalIsAProblemDetailWithItsStatus() throws Exception {
    StringWriter body = new StringWriter();
    int[] status = {200};
    TaskErrors.StatusWriter out = new TaskErrors.StatusWriter(body, s -> status[0] = s);
    SKU.execute(params("tenant", "t1", "sku", "s1", "total", "abc"), out);
    out.flush();
    assertEquals(400, status[0]);
    JsonNode json = JSON.readTree(body.toString());
    assertEquals("INVALID_PARAMETER", json.path("code").asText());
    assertEquals("INVALID_PARAMETER", json.path("error").asText());
    assertEquals("https://flashsale.dev/problems/invalid-parameter", json.path("type").asText());
    assertEquals("Bad Request", json.path("title").asText());
    assertEquals(400, json.path("status").asInt());
    assertTrue(json.path("detail").isTextual(), body.toString());
    assertEquals("total", json.path("parameter").asText());
    assertFalse(body.toString().contains("Exception"), body.toString());
  }

  @Test
  void theScheduleTriggerIsOffWithoutASchedule() throws Exception {
    StringWriter body = new StringWriter();
    int[] status = {200};
    TaskErrors.StatusWriter out = new TaskErrors.StatusWriter(body, s -> status[0] = s);
    new TriggerReconcileScheduleTask(null, "the in-memory engine has no schedules").execute(Map.of(), out);
    out.flush();
    assertEquals(409, status[0]);
    JsonNode json = JSON.readTree(body.toString());
    assertEquals("SCHEDULE_OFF", json.path("code").asText());
    assertTrue(json.path("detail").asText().contains("in-memory engine"), body.toString());
    assertRefused(400, "UNKNOWN_PARAMETER", "repair",
        refused(new TriggerReconcileScheduleTask(null, "off"), "repair", "true"));
  }

  @Test
  void throughTheFilterAnUnexpectedFailureIsAProblem500WithoutDetails() throws Exception {
    StringWriter body = new StringWriter();
    int[] status = {200};
    TaskErrors.StatusWriter out = new TaskErrors.StatusWriter(body, s -> status[0] = s);
    // valid parameters reach the store, which has no database here
    SKU.execute(params("tenant", "t1", "sku", "s1", "total", "5"), out);
    out.flush();
    assertEquals(500, status[0]);
    JsonNode json = JSON.readTree(body.toString());
    assertEquals("INTERNAL", json.path("code").asText());
    assertEquals("INTERNAL", json.path("error").asText());
    assertEquals(500, json.path("status").asInt());
    assertEquals("Internal Server Error", json.path("title").asText());
    assertFalse(json.has("parameter"), body.toString());
    assertTrue(json.path("detail").asText().startsWith("internal error, id "), body.toString());
    assertFalse(body.toString().contains("NullPointer"), body.toString());
  }

  @ParameterizedTest(name = "HTTP {0}")
  @ValueSource(ints = {404, 405})
  void theTaskServletsBodilessRefusalsBecomeProblemDetails(int status) throws Exception {
    jakarta.servlet.http.HttpServletResponse res = org.mockito.Mockito.mock(jakarta.servlet.http.HttpServletResponse.class);
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    org.mockito.Mockito.when(res.getStatus()).thenReturn(status);
    org.mockito.Mockito.when(res.getOutputStream()).thenReturn(new jakarta.servlet.ServletOutputStream() {
      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setWriteListener(jakarta.servlet.WriteListener listener) {}

      @Override
      public void write(int b) {
        bytes.write(b);
      }
    });
    // what the TaskServlet does for an unknown task or a GET: a status, no body
    new TaskErrors().doFilter(org.mockito.Mockito.mock(jakarta.servlet.http.HttpServletRequest.class), res,
        (rq, rs) -> ((jakarta.servlet.http.HttpServletResponse) rs).setStatus(status));
    org.mockito.Mockito.verify(res).setContentType("application/problem+json");
    JsonNode json = JSON.readTree(bytes.toByteArray());
    String code = status == 404 ? "NOT_FOUND" : "METHOD_NOT_ALLOWED";
    assertEquals(code, json.path("code").asText(), json.toString());
    assertEquals(code, json.path("error").asText(), json.toString());
    assertEquals(status, json.path("status").asInt(), json.toString());
    if (status == 405) org.mockito.Mockito.verify(res).setHeader("Allow", "POST");
  }
}
