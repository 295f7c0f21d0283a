package io.flashsale.api.core;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Set;
import java.util.regex.Pattern;

/** Strict reading of JSON request bodies: known fields only, typed, bounded. */
public final class Bodies {
  private static final Set<String> IDENTITY_FIELDS = Set.of("tenant", "subject", "user", "user_id", "tenant_id");

  private Bodies() {}

  public static JsonNode object(JsonNode body, Set<String> allowed) {
    if (body == null || !body.isObject()) throw ApiError.badRequest("BODY_REQUIRED", "a JSON object body is required");
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (IDENTITY_FIELDS.contains(f)) {
        throw ApiError.badRequest("IDENTITY_IN_BODY", "identity comes from the token, not the body: " + f);
      }
      if (!allowed.contains(f)) throw ApiError.badRequest("UNKNOWN_FIELD", "unknown field " + f);
    }
    return body;
  }

  /** A JSON object; fields this version does not know are ignored (bodies from other systems). */
  public static JsonNode objectIgnoringUnknown(JsonNode body) {
    if (body == null || !body.isObject()) throw ApiError.badRequest("BODY_REQUIRED", "a JSON object body is required");
    return body;
  }

  public static String text(JsonNode body, String field, Pattern pattern, boolean required) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      if (required) throw ApiError.badRequest("MISSING_FIELD", field + " is required");
      return null;
    }
    if (!v.isTextual()) throw ApiError.badRequest("INVALID_FIELD", field + " must be a string");
    String text = v.asText();
    if (!cleanText(text)) {
      throw ApiError.badRequest("INVALID_TEXT", field + " contains a control character or a lone surrogate");
    }
    if (!pattern.matcher(text).matches()) {
      throw ApiError.badRequest("INVALID_FIELD", field + " must match " + pattern.pattern());
    }
    return text;
  }

  /**
   * No control characters (NUL and the rest: PostgreSQL refuses NUL in text, and none belongs in
   * an order) and no lone surrogates (not encodable as UTF-8).
   */
  public static boolean cleanText(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isISOControl(c)) return false;
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) return false;
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }

  public static long integer(JsonNode body, String field, long min, long max) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) throw ApiError.badRequest("MISSING_FIELD", field + " is required");
    // compared exactly: a number past 64 bits must not wrap around into range
    java.math.BigDecimal n = integralValue(v);
    if (n == null || n.compareTo(java.math.BigDecimal.valueOf(min)) < 0 || n.compareTo(java.math.BigDecimal.valueOf(max)) > 0) {
      throw ApiError.badRequest("INVALID_FIELD", field + " must be an integer in " + min + ".." + max);
    }
    return n.longValueExact();
  }

  /** JSON's integer as JSON Schema reads it: 2 and 2.0 are the integer 2; 2.5, NaN, infinity are none. */
  private static java.math.BigDecimal integralValue(JsonNode v) {
    if (v.isIntegralNumber()) return new java.math.BigDecimal(v.bigIntegerValue());
    if (!v.isFloatingPointNumber()) return null;
    if ((v.isDouble() || v.isFloat()) && !Double.isFinite(v.doubleValue())) return null;
    java.math.BigDecimal d = v.decimalValue();
    return d.signum() == 0 || d.stripTrailingZeros().scale() <= 0 ? d : null;
  }
}
