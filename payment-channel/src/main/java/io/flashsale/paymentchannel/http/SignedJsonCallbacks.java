package io.flashsale.paymentchannel.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.paymentchannel.CallbackReader;
import io.flashsale.paymentchannel.CallbackRefusal;
import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.paymentchannel.ChannelNotice;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.List;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The channel stub's callback format (docs/DESIGN.md §Callbacks): header {@code X-Channel-Signature:
 * t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">} ({@link CallbackSignatures}) and a JSON
 * body {@code {notify_id, merchant_order, kind, amount, txn}}.
 *
 * <ul>
 *   <li>No secret: every callback is refused 401 BAD_SIGNATURE (fail closed), and logged as an error.
 *   <li>Several secrets (rotation): a signature made with any of them is accepted.
 *   <li>A missing, malformed, stale (more than {@link CallbackSignatures#TOLERANCE_SECONDS} away) or
 *       wrong signature: 401 BAD_SIGNATURE. The body is read only once it is verified.
 *   <li>The body is one JSON value with each key once (a duplicate key or trailing data is 400
 *       MALFORMED_JSON, so a signed body is read one way); unknown fields are ignored (a channel
 *       that adds a field must not be refused forever); the fields are validated with the API's
 *       codes: BODY_REQUIRED, MISSING_FIELD, INVALID_FIELD, INVALID_TEXT.
 * </ul>
 */
public final class SignedJsonCallbacks implements CallbackReader {
  private static final Logger log = LoggerFactory.getLogger(SignedJsonCallbacks.class);
  /** The API's strict reading of JSON bodies: each key once, one value. */
  private static final ObjectMapper STRICT = new ObjectMapper()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  private static final Pattern KIND = Pattern.compile("CHARGED|DECLINED|REFUNDED");

  /** The callback secrets accepted: the current one first, then one being retired (rotation). */
  private final List<String> secrets;
  private final LongSupplier nowSeconds;

  /**
   * @param secrets the secrets a signature may be made with (the current one and, while it is
   *     rotated out, the previous one); blank and null ones are dropped, and none refuses every
   *     callback (fail closed)
   */
  public SignedJsonCallbacks(List<String> secrets) {
    this(secrets, () -> System.currentTimeMillis() / 1000);
  }

  SignedJsonCallbacks(List<String> secrets, LongSupplier nowSeconds) {
    this.secrets = secrets.stream().filter(s -> s != null && !s.isBlank()).toList();
    this.nowSeconds = nowSeconds;
  }

  @Override
  public ChannelNotice read(Function<String, String> header, byte[] body) throws CallbackRefusal {
    if (secrets.isEmpty()) {
      // fail closed: without a secret no callback can be told from a forgery
      log.error("callback refused: no channel.callbackSecret is configured, so no signature can be checked");
      throw CallbackRefusal.badSignature("callback signatures cannot be verified here");
    }
    if (!signatureValid(header.apply(CallbackSignatures.HEADER), body)) {
      throw CallbackRefusal.badSignature("callback signature missing, stale or wrong");
    }
    JsonNode json;
    try {
      json = STRICT.readTree(body); // one value, each key once: a signed body is read one way
    } catch (IOException e) {
      throw CallbackRefusal.badRequest("MALFORMED_JSON", "the request body is not valid JSON");
    }
    if (json == null || !json.isObject()) {
      throw CallbackRefusal.badRequest("BODY_REQUIRED", "a JSON object body is required");
    }
    String notifyId = text(json, "notify_id", ID, true);
    String merchantOrder = text(json, "merchant_order", ID, true);
    String kind = text(json, "kind", KIND, true);
    long amount = integer(json, "amount", 0, Long.MAX_VALUE);
    String txn = text(json, "txn", ID, false);
    return new ChannelNotice(notifyId, merchantOrder, kind, amount, txn);
  }

  private boolean signatureValid(String signature, byte[] raw) {
    long now = nowSeconds.getAsLong();
    for (String secret : secrets) {
      if (CallbackSignatures.valid(secret, signature, raw, now)) return true;
    }
    return false;
  }

  private static String text(JsonNode body, String field, Pattern pattern, boolean required) throws CallbackRefusal {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      if (required) throw CallbackRefusal.badRequest("MISSING_FIELD", field + " is required");
      return null;
    }
    if (!v.isTextual()) throw CallbackRefusal.badRequest("INVALID_FIELD", field + " must be a string");
    String text = v.asText();
    if (!cleanText(text)) {
      throw CallbackRefusal.badRequest("INVALID_TEXT", field + " contains a control character or a lone surrogate");
    }
    if (!pattern.matcher(text).matches()) {
      throw CallbackRefusal.badRequest("INVALID_FIELD", field + " must match " + pattern.pattern());
    }
    return text;
  }

  /** No control characters and no lone surrogates (the API's rule for any text it takes). */
  static boolean cleanText(String s) {
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

  private static long integer(JsonNode body, String field, long min, long max) throws CallbackRefusal {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) throw CallbackRefusal.badRequest("MISSING_FIELD", field + " is required");
    // compared exactly: a number past 64 bits must not wrap around into range
    BigDecimal n = integralValue(v);
    if (n == null || n.compareTo(BigDecimal.valueOf(min)) < 0 || n.compareTo(BigDecimal.valueOf(max)) > 0) {
      throw CallbackRefusal.badRequest("INVALID_FIELD", field + " must be an integer in " + min + ".." + max);
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
