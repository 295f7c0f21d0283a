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
import org.junit.jupiter.api.Test;

/**
 * Task parameters are checked before the database is touched (the stores here have none, so a
 * call that got past validation would fail with a NullPointerException), and a refusal is a JSON
 * 4xx with a stable code through the filter's writer.
 */
class AdminTaskTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final SkuTask sku = new SkuTask(new Skus(null));
  private final RevokeTask revoke = new RevokeTask(new Principals(null));
  private final UnrevokeTask unrevoke = new UnrevokeTask(new Principals(null));

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

  @Test
  void nonNumericValuesAreInvalidParameters() {
    assertRefused(400, "INVALID_PARAMETER", "total", refused(sku, "tenant", "t1", "sku", "s1", "total", "ten"));
    assertRefused(400, "INVALID_PARAMETER", "total", refused(sku, "tenant", "t1", "sku", "s1", "total", "-1"));
    assertRefused(400, "INVALID_PARAMETER", "total", refused(sku, "tenant", "t1", "sku", "s1", "total", "1e3"));
    assertRefused(400, "INVALID_PARAMETER", "total",
        refused(sku, "tenant", "t1", "sku", "s1", "total", "99999999999999999999999"));
    assertRefused(400, "INVALID_PARAMETER", "unit_price",
        refused(sku, "tenant", "t1", "sku", "s1", "total", "5", "unit_price", "19.90"));
    assertRefused(400, "INVALID_PARAMETER", "per_user_limit",
        refused(sku, "tenant", "t1", "sku", "s1", "total", "5", "per_user_limit", "three"));
  }

  @Test
  void zeroPriceAndZeroLimitAreRefused() {
    TaskError e = refused(sku, "tenant", "t1", "sku", "s1", "total", "5", "unit_price", "0");
    assertRefused(400, "INVALID_PARAMETER", "unit_price", e);
    assertTrue(e.getMessage().contains("1.."), e.getMessage());
    assertRefused(400, "INVALID_PARAMETER", "per_user_limit",
        refused(sku, "tenant", "t1", "sku", "s1", "total", "5", "per_user_limit", "0"));
  }

  @Test
  void skuAndTenantNamesFollowTheApiPatterns() {
    assertRefused(400, "INVALID_PARAMETER", "sku", refused(sku, "tenant", "t1", "sku", "bad sku!", "total", "5"));
    assertRefused(400, "INVALID_PARAMETER", "sku", refused(sku, "tenant", "t1", "sku", "x".repeat(65), "total", "5"));
    assertRefused(400, "INVALID_PARAMETER", "sku", refused(sku, "tenant", "t1", "sku", "s'1", "total", "5"));
    assertRefused(400, "INVALID_PARAMETER", "tenant", refused(sku, "tenant", "t 1", "sku", "s1", "total", "5"));
    assertRefused(400, "INVALID_PARAMETER", "subject", refused(revoke, "tenant", "t1", "subject", "u/1"));
    assertRefused(400, "INVALID_PARAMETER", "subject", refused(unrevoke, "tenant", "t1", "subject", "u\u00001"));
  }

  @Test
  void missingUnknownAndRepeatedParameters() {
    assertRefused(400, "MISSING_PARAMETER", "total", refused(sku, "tenant", "t1", "sku", "s1"));
    assertRefused(400, "MISSING_PARAMETER", "total", refused(sku, "tenant", "t1", "sku", "s1", "total", ""));
    assertRefused(400, "MISSING_PARAMETER", "tenant", refused(revoke, "subject", "u1"));
    assertRefused(400, "UNKNOWN_PARAMETER", "per_user_limt",
        refused(sku, "tenant", "t1", "sku", "s1", "total", "5", "per_user_limt", "2"));
    assertRefused(400, "INVALID_PARAMETER", "total",
        refused(sku, "tenant", "t1", "sku", "s1", "total", "5", "total", "6"));
  }

  @Test
  void reconcileParametersAreChecked() {
    ReconcileTask reconcile = new ReconcileTask(null, null, null);
    assertRefused(400, "INVALID_PARAMETER", "repair", refused(reconcile, "repair", "yes"));
    assertRefused(400, "INVALID_PARAMETER", "format", refused(reconcile, "format", "xml"));
    assertRefused(400, "UNKNOWN_PARAMETER", "repiar", refused(reconcile, "repiar", "true"));
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
  void throughTheFilterARefusalIsJsonWithItsStatus() throws Exception {
    StringWriter body = new StringWriter();
    int[] status = {200};
    TaskErrors.StatusWriter out = new TaskErrors.StatusWriter(body, s -> status[0] = s);
    sku.execute(params("tenant", "t1", "sku", "s1", "total", "abc"), out);
    out.flush();
    assertEquals(400, status[0]);
    JsonNode json = JSON.readTree(body.toString());
    assertEquals("INVALID_PARAMETER", json.path("error").asText());
    assertEquals("total", json.path("parameter").asText());
    assertFalse(body.toString().contains("Exception"), body.toString());
  }

  @Test
  void throughTheFilterAnUnexpectedFailureIsJson500WithoutDetails() throws Exception {
    StringWriter body = new StringWriter();
    int[] status = {200};
    TaskErrors.StatusWriter out = new TaskErrors.StatusWriter(body, s -> status[0] = s);
    // valid parameters reach the store, which has no database here
    sku.execute(params("tenant", "t1", "sku", "s1", "total", "5"), out);
    out.flush();
    assertEquals(500, status[0]);
    JsonNode json = JSON.readTree(body.toString());
    assertEquals("INTERNAL", json.path("error").asText());
    assertTrue(json.path("message").asText().startsWith("internal error, id "), body.toString());
    assertFalse(body.toString().contains("NullPointer"), body.toString());
  }
}
