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

  public static String text(JsonNode body, String field, Pattern pattern, boolean required) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      if (required) throw ApiError.badRequest("MISSING_FIELD", field + " is required");
      return null;
    }
    if (!v.isTextual() || !pattern.matcher(v.asText()).matches()) {
      throw ApiError.badRequest("INVALID_FIELD", field + " must match " + pattern.pattern());
    }
    return v.asText();
  }

  public static long integer(JsonNode body, String field, long min, long max) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) throw ApiError.badRequest("MISSING_FIELD", field + " is required");
    if (!v.isIntegralNumber() || v.asLong() < min || v.asLong() > max) {
      throw ApiError.badRequest("INVALID_FIELD", field + " must be an integer in " + min + ".." + max);
    }
    return v.asLong();
  }
}
