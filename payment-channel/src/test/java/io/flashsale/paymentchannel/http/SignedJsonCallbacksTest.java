package io.flashsale.paymentchannel.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flashsale.paymentchannel.CallbackRefusal;
import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.paymentchannel.ChannelNotice;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The stub's callback format: each refusal with its status, code and message (those the API gave
 * before the format moved behind the port), rotation, and the fields read.
 */
class SignedJsonCallbacksTest {
  private static final long NOW = 1_767_000_000L;
  private static final String CURRENT = "current-secret";
  private static final String PREVIOUS = "previous-secret";
  private static final String BODY = "{\"notify_id\":\"n-1\",\"merchant_order\":\"ord-0001\",\"kind\":\"CHARGED\","
      + "\"amount\":1990,\"txn\":\"txn-1\"}";

  private final SignedJsonCallbacks reader = new SignedJsonCallbacks(List.of(CURRENT, PREVIOUS), () -> NOW);

  @Test
  void aSignedNoticeIsRead() throws CallbackRefusal {
    assertEquals(new ChannelNotice("n-1", "ord-0001", "CHARGED", 1990, "txn-1"), read(reader, CURRENT, NOW, BODY));
  }

  @Test
  void unknownFieldsAreIgnoredAndTxnIsOptional() throws CallbackRefusal {
    ChannelNotice n = read(reader, CURRENT, NOW,
        "{\"notify_id\":\"n-2\",\"merchant_order\":\"o\",\"kind\":\"DECLINED\",\"amount\":2.0,\"extra\":{\"x\":1}}");
    assertEquals(new ChannelNotice("n-2", "o", "DECLINED", 2, null), n);
  }

  @Test
  void withoutASecretEveryCallbackIsRefused() {
    for (List<String> none : List.of(List.<String>of(), Arrays.asList("", null, "  "))) {
      SignedJsonCallbacks closed = new SignedJsonCallbacks(none, () -> NOW);
      CallbackRefusal r = assertThrows(CallbackRefusal.class, () -> read(closed, "any", NOW, BODY));
      assertRefusal(r, 401, "BAD_SIGNATURE", "callback signatures cannot be verified here");
    }
  }

  @Test
  void eitherSecretOfARotationIsAccepted() throws CallbackRefusal {
    // a body signed with the old secret, still sent by the channel while the rotation is under way
    assertEquals("n-1", read(reader, PREVIOUS, NOW, BODY).notifyId());
    assertEquals("n-1", read(reader, CURRENT, NOW, BODY).notifyId());
    // once the old secret is cleared, its signatures are refused
    SignedJsonCallbacks rotated = new SignedJsonCallbacks(List.of(CURRENT, ""), () -> NOW);
    assertRefusal(assertThrows(CallbackRefusal.class, () -> read(rotated, PREVIOUS, NOW, BODY)), 401, "BAD_SIGNATURE",
        "callback signature missing, stale or wrong");
  }

  @Test
  void aMissingStaleMalformedOrWrongSignatureIsRefused() {
    byte[] body = BODY.getBytes(StandardCharsets.UTF_8);
    String stale = CallbackSignatures.header(CURRENT, NOW - CallbackSignatures.TOLERANCE_SECONDS - 1, body);
    String future = CallbackSignatures.header(CURRENT, NOW + CallbackSignatures.TOLERANCE_SECONDS + 1, body);
    String third = CallbackSignatures.header("a-third-secret", NOW, body);
    String otherBody = CallbackSignatures.header(CURRENT, NOW, (BODY + " ").getBytes(StandardCharsets.UTF_8));
    for (String header : new String[] {null, "", "t=1,v1=" + "0".repeat(64), stale, future, third, otherBody,
        CallbackSignatures.header(CURRENT, NOW, body).toUpperCase()}) {
      CallbackRefusal r = assertThrows(CallbackRefusal.class, () -> reader.read(only(header), body), header);
      assertRefusal(r, 401, "BAD_SIGNATURE", "callback signature missing, stale or wrong");
    }
  }

  @Test
  void theSignatureIsCheckedBeforeTheBody() {
    assertRefusal(assertThrows(CallbackRefusal.class, () -> reader.read(only(null), "not json".getBytes(StandardCharsets.UTF_8))),
        401, "BAD_SIGNATURE", "callback signature missing, stale or wrong");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
      "not json|MALFORMED_JSON|the request body is not valid JSON",
      "`{\"notify_id\":\"a\",\"notify_id\":\"b\"}`|MALFORMED_JSON|the request body is not valid JSON",
      "`{\"notify_id\":\"a\"}{\"b\":1}`|MALFORMED_JSON|the request body is not valid JSON",
      "`{\"a\":1} 2`|MALFORMED_JSON|the request body is not valid JSON",
      "`[1]`|BODY_REQUIRED|a JSON object body is required",
      "`\"text\"`|BODY_REQUIRED|a JSON object body is required",
      "`null`|BODY_REQUIRED|a JSON object body is required",
      "``|BODY_REQUIRED|a JSON object body is required",
      "`{\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1}`|MISSING_FIELD|notify_id is required",
      "`{\"notify_id\":null,\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1}`|MISSING_FIELD|notify_id is required",
      "`{\"notify_id\":\"n\",\"kind\":\"CHARGED\",\"amount\":1}`|MISSING_FIELD|merchant_order is required",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"amount\":1}`|MISSING_FIELD|kind is required",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\"}`|MISSING_FIELD|amount is required",
      "`{\"notify_id\":7,\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1}`|INVALID_FIELD|notify_id must be a string",
      "`{\"notify_id\":\"n n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1}`|INVALID_FIELD|notify_id must match [A-Za-z0-9._:-]{1,64}",
      "`{\"notify_id\":\"n\\u0000\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1}`|INVALID_TEXT|notify_id contains a control character or a lone surrogate",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\\ud800\",\"kind\":\"CHARGED\",\"amount\":1}`|INVALID_TEXT|merchant_order contains a control character or a lone surrogate",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"PAID\",\"amount\":1}`|INVALID_FIELD|`kind must match CHARGED|DECLINED|REFUNDED`",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":-1}`|INVALID_FIELD|amount must be an integer in 0..9223372036854775807",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1.5}`|INVALID_FIELD|amount must be an integer in 0..9223372036854775807",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":\"1\"}`|INVALID_FIELD|amount must be an integer in 0..9223372036854775807",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":9223372036854775808}`|INVALID_FIELD|amount must be an integer in 0..9223372036854775807",
      "`{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1,\"txn\":5}`|INVALID_FIELD|txn must be a string",
  })
  void aSignedBodyThatIsNoNoticeIsRefused(String body, String code, String message) {
    CallbackRefusal r = assertThrows(CallbackRefusal.class, () -> read(reader, CURRENT, NOW, body));
    assertRefusal(r, 400, code, message);
  }

  private static ChannelNotice read(SignedJsonCallbacks reader, String secret, long t, String body) throws CallbackRefusal {
    byte[] raw = body.getBytes(StandardCharsets.UTF_8);
    return reader.read(only(CallbackSignatures.header(secret, t, raw)), raw);
  }

  /** Headers with only the signature (looked up by name, any case). */
  private static Function<String, String> only(String signature) {
    return name -> CallbackSignatures.HEADER.equalsIgnoreCase(name) ? signature : null;
  }

  private static void assertRefusal(CallbackRefusal r, int status, String code, String message) {
    assertEquals(status, r.status());
    assertEquals(code, r.code());
    assertEquals(message, r.getMessage());
    assertEquals(status == 401, r.unauthenticated());
  }

  @Test
  void noticeFieldsAreTheBodysOwn() throws CallbackRefusal {
    assertNull(read(reader, CURRENT, NOW,
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"REFUNDED\",\"amount\":0,\"txn\":null}").txn());
  }
}
