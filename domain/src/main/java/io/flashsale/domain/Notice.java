package io.flashsale.domain;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigInteger;
import java.util.regex.Pattern;

/**
 * A payment notice for the order's workflow (signal {@code paymentNotification}).
 *
 * <p>From the API it arrives recorded: notificationId is the payment_notification row whose
 * effect the workflow fills in. An operator can also send one with the temporal CLI, with the
 * HTTP callback's fields ({@code notify_id, kind, amount, txn}), its {@code operator_proof}
 * ({@link OperatorProof}) and no arrival: notificationId is 0 and the workflow records the arrival
 * itself. A payload that is not a valid notice is never dropped: it becomes a notice with {@code
 * rejection} set, recorded as REJECTED.
 */
public record Notice(long notificationId, String notifyId, String kind, long amount, String txn, String rejection,
    String operatorProof) {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  private static final Pattern KIND = Pattern.compile("CHARGED|DECLINED|REFUNDED");
  private static final BigInteger MAX_AMOUNT = BigInteger.valueOf(Long.MAX_VALUE);

  public Notice(long notificationId, String notifyId, String kind, long amount, String txn) {
    this(notificationId, notifyId, kind, amount, txn, null, null);
  }

  public Notice(long notificationId, String notifyId, String kind, long amount, String txn, String rejection) {
    this(notificationId, notifyId, kind, amount, txn, rejection, null);
  }

  /** True when the API recorded its arrival before signalling. */
  public boolean recorded() {
    return notificationId > 0;
  }

  /** Both shapes: the API's (camelCase, with the arrival id) and the callback's (snake_case). */
  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  public static Notice fromJson(JsonNode json) {
    if (json == null || !json.isObject()) {
      return malformed(null, "payload is not a JSON object");
    }
    long arrival = json.path("notificationId").asLong(json.path("notification_id").asLong(0));
    String notifyId = text(json, "notifyId", "notify_id");
    String kind = text(json, "kind", "kind");
    String txn = text(json, "txn", "txn");
    String operatorProof = text(json, "operatorProof", "operator_proof");
    String rejection = json.hasNonNull("rejection") ? json.get("rejection").asText() : null;
    JsonNode amountNode = json.get("amount");
    long amount = 0;
    if (amountNode != null && amountNode.isIntegralNumber() && amountNode.bigIntegerValue().signum() >= 0
        && amountNode.bigIntegerValue().compareTo(MAX_AMOUNT) <= 0) {
      amount = amountNode.longValue();
    } else if (rejection == null) {
      rejection = "amount must be a non-negative integer";
    }
    if (rejection == null && (notifyId == null || !ID.matcher(notifyId).matches())) {
      rejection = "notify_id missing or not an id";
    }
    if (rejection == null && (kind == null || !KIND.matcher(kind).matches())) {
      rejection = "kind must be CHARGED, DECLINED or REFUNDED";
    }
    if (rejection == null && txn != null && !ID.matcher(txn).matches()) {
      rejection = "txn is not an id";
    }
    return new Notice(arrival, notifyId, kind, amount, txn, rejection, operatorProof);
  }

  private static Notice malformed(String notifyId, String why) {
    return new Notice(0, notifyId, null, 0, null, why);
  }

  private static String text(JsonNode json, String camel, String snake) {
    JsonNode v = json.hasNonNull(camel) ? json.get(camel) : json.get(snake);
    return v == null || v.isNull() ? null : v.isValueNode() ? v.asText() : v.toString();
  }
}
