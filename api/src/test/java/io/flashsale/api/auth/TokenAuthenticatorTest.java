package io.flashsale.api.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import io.flashsale.persistence.Principals;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Base64;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.mockito.MockMakers;

/** Which verified tokens still speak for their caller. */
class TokenAuthenticatorTest {
  private final TokenService tokens = new TokenService("test-secret", 3_600, Clock.systemUTC());
  private final Principals principals = mock(Principals.class, withSettings().mockMaker(MockMakers.INLINE));
  private final TokenAuthenticator authenticator = new TokenAuthenticator(tokens, principals);

  @Test
  void aTokenWithoutIssuedAtIsRefusedEvenForAPrincipalNeverLoggedOut() throws Exception {
    String legacy = legacyToken("t1", "user-1", Clock.systemUTC().instant().getEpochSecond() + 60);
    when(principals.standing("t1", "user-1")).thenReturn(Principals.Standing.CLEAR);
    assertTrue(authenticator.authenticate(legacy).isEmpty(), "no issued-at: nothing bounds its life, 401");
  }

  @Test
  void aRefusalNamesItsReason() {
    Caller caller = tokens.verify(tokens.issue("t1", "user-2")).orElseThrow();
    when(principals.standing("t1", "user-2")).thenReturn(Principals.Standing.CLEAR);
    assertEquals(Optional.empty(), authenticator.refusal(caller));
    when(principals.standing("t1", "user-2")).thenReturn(new Principals.Standing(false, caller.issuedAtMillis()));
    assertEquals(Optional.of(TokenAuthenticator.Refusal.SESSION_ENDED), authenticator.refusal(caller),
        "a token issued in the very millisecond of a logout is refused too");
    when(principals.standing("t1", "user-2")).thenReturn(new Principals.Standing(true, caller.issuedAtMillis() - 1));
    assertEquals(Optional.of(TokenAuthenticator.Refusal.REVOKED), authenticator.refusal(caller));
    when(principals.standing("t1", "user-2")).thenReturn(new Principals.Standing(false, caller.issuedAtMillis() - 1));
    assertTrue(authenticator.refusal(caller).isEmpty(), "issued after the logout");
  }

  /** The format before issued-at times: keyId "." base64(tenant|subject|expiry) "." HMAC. */
  private static String legacyToken(String tenant, String subject, long expiresAt) throws Exception {
    String signed = "default." + b64((tenant + "|" + subject + "|" + expiresAt).getBytes(StandardCharsets.UTF_8));
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec("test-secret".getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    return signed + "." + b64(mac.doFinal(signed.getBytes(StandardCharsets.UTF_8)));
  }

  private static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }
}
