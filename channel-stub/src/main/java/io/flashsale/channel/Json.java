package io.flashsale.channel;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;

/** JSON helpers: one shared mapper, request field readers (400 on bad input) and an ordered-map builder. */
final class Json {
  static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .enable(JsonGenerator.Feature.WRITE_BIGDECIMAL_AS_PLAIN);

  private Json() {}

  /** Parses a request body that must be a JSON object; an empty body counts as {} only if allowed. */
  static ObjectNode parseObject(byte[] body, boolean emptyAllowed) {
    if (body.length == 0 || new String(body, java.nio.charset.StandardCharsets.UTF_8).isBlank()) {
      if (emptyAllowed) {
        return MAPPER.createObjectNode();
      }
      throw ApiException.badRequest("request body must be a JSON object");
    }
    JsonNode node;
    try {
      node = MAPPER.readTree(body);
    } catch (IOException e) {
      throw ApiException.badRequest("malformed JSON");
    }
    if (node == null || !node.isObject()) {
      throw ApiException.badRequest("request body must be a JSON object");
    }
    return (ObjectNode) node;
  }

  static byte[] write(Object value) {
    try {
      return MAPPER.writeValueAsBytes(value);
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialize reply", e);
    }
  }

  /** Ordered map from key/value pairs; entries whose value is null are left out. */
  static Map<String, Object> obj(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      if (kv[i + 1] != null) {
        m.put((String) kv[i], kv[i + 1]);
      }
    }
    return m;
  }

  static String requiredText(ObjectNode n, String field) {
    String s = optionalText(n, field);
    if (s == null || s.isBlank()) {
      throw ApiException.badRequest("missing field " + field);
    }
    return s;
  }

  static String optionalText(ObjectNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isTextual()) {
      throw ApiException.badRequest("field " + field + " must be a string");
    }
    return v.asText();
  }

  /** A non-negative amount given as a JSON number or a numeric string. */
  static BigDecimal requiredAmount(ObjectNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      throw ApiException.badRequest("missing field " + field);
    }
    BigDecimal amount;
    if (v.isNumber()) {
      amount = v.decimalValue();
    } else if (v.isTextual()) {
      try {
        amount = new BigDecimal(v.asText().trim());
      } catch (NumberFormatException e) {
        throw ApiException.badRequest("field " + field + " must be a number");
      }
    } else {
      throw ApiException.badRequest("field " + field + " must be a number");
    }
    if (amount.signum() < 0) {
      throw ApiException.badRequest("field " + field + " must not be negative");
    }
    return amount;
  }

  static Long optionalMillis(ObjectNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.canConvertToLong() || !v.isIntegralNumber() || v.asLong() < 0) {
      throw ApiException.badRequest("field " + field + " must be a non-negative integer");
    }
    return v.asLong();
  }

  static Boolean optionalBoolean(ObjectNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isBoolean()) {
      throw ApiException.badRequest("field " + field + " must be a boolean");
    }
    return v.asBoolean();
  }

  /** Amount as it goes on the wire: a whole number as an integer, otherwise a plain decimal. */
  static Object amount(BigDecimal amount) {
    if (amount == null) {
      return null;
    }
    BigDecimal stripped = amount.stripTrailingZeros();
    if (stripped.scale() <= 0) {
      try {
        return stripped.longValueExact();
      } catch (ArithmeticException tooBig) {
        return stripped.toBigInteger();
      }
    }
    return stripped;
  }
}
