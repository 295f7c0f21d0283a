package io.flashsale.paymentchannel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class CallbackSignaturesTest {
  private static final String SECRET = "0123456789abcdef0123456789abcdef";
  private static final byte[] BODY = "{\"merchant_order\":\"ord-0001\",\"kind\":\"CHARGED\"}".getBytes(StandardCharsets.UTF_8);
  private static final long NOW = 1_800_000_000L;

  @Test
  void aSignedBodyIsValidWithinTheTolerance() {
    String header = CallbackSignatures.header(SECRET, NOW, BODY);
    assertTrue(header.matches("t=1800000000,v1=[0-9a-f]{64}"), header);
    assertTrue(CallbackSignatures.valid(SECRET, header, BODY, NOW));
    assertTrue(CallbackSignatures.valid(SECRET, header, BODY, NOW + CallbackSignatures.TOLERANCE_SECONDS));
    assertFalse(CallbackSignatures.valid(SECRET, header, BODY, NOW + CallbackSignatures.TOLERANCE_SECONDS + 1),
        "a replay of an old callback");
  }

  @Test
  void anotherBodySecretOrTimeIsRefused() {
    String header = CallbackSignatures.header(SECRET, NOW, BODY);
    byte[] changed = "{\"merchant_order\":\"ord-0002\",\"kind\":\"CHARGED\"}".getBytes(StandardCharsets.UTF_8);
    assertFalse(CallbackSignatures.valid(SECRET, header, changed, NOW));
    assertFalse(CallbackSignatures.valid(SECRET + "x", header, BODY, NOW));
    assertFalse(CallbackSignatures.valid(SECRET, header.replace("t=" + NOW, "t=" + (NOW + 1)), BODY, NOW),
        "the time is signed too");
  }

  @Test
  void malformedHeadersAreRefusedWithoutAnException() {
    for (String header : new String[] {null, "", "v1=abc", "t=1800000000", "t=1800000000,v1=XYZ",
        "t=99999999999999999999999,v1=" + "a".repeat(64), "t=-5,v1=" + "a".repeat(64),
        CallbackSignatures.header(SECRET, NOW, BODY) + " "}) {
      assertFalse(CallbackSignatures.valid(SECRET, header, BODY, NOW), String.valueOf(header));
    }
  }

  @Test
  void theHmacIsTheKnownSha256() {
    // RFC 4231 test case 2
    assertEquals("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        CallbackSignatures.hmacHex("Jefe", "what do ya want for nothing?"));
  }
}
