package io.flashsale.paymentchannel;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.regex.Pattern;

/**
 * The field rules every JSON body the service takes is read by: the API's request bodies and each
 * channel's callbacks. A refusal carries the stable code the caller answers with (MISSING_FIELD,
 * INVALID_FIELD, INVALID_TEXT); each caller turns it into its own error.
 */
public final class JsonFields {
  private JsonFields() {}

  /** A field the rules refuse: the stable code and the message, for a 400. */
  public static final class Refusal extends RuntimeException {
    private final String code;

    Refusal(String code, String message) {
      super(message, null, false, false);
      this.code = code;
    }

    public String code() {
      return code;
    }
  }

  public static String text(JsonNode body, String field, Pattern pattern, boolean required) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      if (required) throw new Refusal("MISSING_FIELD", field + " is required");
      return null;
    }
    if (!v.isTextual()) throw new Refusal("INVALID_FIELD", field + " must be a string");
    String text = v.asText();
    if (!cleanText(text)) {
      throw new Refusal("INVALID_TEXT", field + " contains a control character or a lone surrogate");
    }
    if (!pattern.matcher(text).matches()) {
      throw new Refusal("INVALID_FIELD", field + " must match " + pattern.pattern());
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
    if (v == null || v.isNull()) throw new Refusal("MISSING_FIELD", field + " is required");
    // compared exactly: a number past 64 bits must not wrap around into range
    BigDecimal n = integralValue(v);
    if (n == null || n.compareTo(BigDecimal.valueOf(min)) < 0 || n.compareTo(BigDecimal.valueOf(max)) > 0) {
      throw new Refusal("INVALID_FIELD", field + " must be an integer in " + min + ".." + max);
    }
    return n.longValueExact();
  }

  /** JSON's integer as JSON Schema reads it: 2 and 2.0 are the integer 2; 2.5, NaN, infinity are none. */
  private static BigDecimal integralValue(JsonNode v) {
    if (v.isIntegralNumber()) return new BigDecimal(v.bigIntegerValue());
    if (!v.isFloatingPointNumber()) return null;
    if ((v.isDouble() || v.isFloat()) && !Double.isFinite(v.doubleValue())) return null;
    BigDecimal d = v.decimalValue();
    return d.signum() == 0 || d.stripTrailingZeros().scale() <= 0 ? d : null;
  }
}
