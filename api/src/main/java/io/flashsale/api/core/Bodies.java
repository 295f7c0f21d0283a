package io.flashsale.api.core;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.paymentchannel.JsonFields;
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
    try {
      return JsonFields.text(body, field, pattern, required);
    } catch (JsonFields.Refusal r) {
      throw ApiError.badRequest(r.code(), r.getMessage());
    }
  }

  /** No control characters and no lone surrogates ({@link JsonFields#cleanText}). */
  public static boolean cleanText(String s) {
    return JsonFields.cleanText(s);
  }

  public static long integer(JsonNode body, String field, long min, long max) {
    try {
      return JsonFields.integer(body, field, min, max);
    } catch (JsonFields.Refusal r) {
      throw ApiError.badRequest(r.code(), r.getMessage());
    }
  }
}
