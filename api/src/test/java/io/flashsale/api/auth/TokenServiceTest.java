package io.flashsale.api.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class TokenServiceTest {
  private final Clock now = Clock.fixed(Instant.parse("2026-11-30T00:00:00Z"), ZoneOffset.UTC);
  private final TokenService tokens = new TokenService("test-secret", 60, now);

  @Test
  void issuedTokenVerifies() {
    assertEquals(new Caller("t1", "user-0042"), tokens.verify(tokens.issue("t1", "user-0042")).orElseThrow());
  }

  @Test
  void tamperedClaimsAreRefused() {
    String token = tokens.issue("t1", "user-0042");
    String forgedClaims = Base64.getUrlEncoder().withoutPadding()
        .encodeToString("t1|user-0043|9999999999".getBytes());
    assertTrue(tokens.verify(forgedClaims + token.substring(token.indexOf('.'))).isEmpty());
  }

  @Test
  void tamperedSignatureAndGarbageAreRefused() {
    String token = tokens.issue("t1", "user-0042");
    char last = token.charAt(token.length() - 1);
    assertTrue(tokens.verify(token.substring(0, token.length() - 1) + (last == 'A' ? 'B' : 'A')).isEmpty());
    assertTrue(tokens.verify("not-a-token").isEmpty());
    assertTrue(tokens.verify("").isEmpty());
    assertTrue(tokens.verify(null).isEmpty());
  }

  @Test
  void otherKeyAndExpiryAreRefused() {
    String token = tokens.issue("t1", "user-0042");
    assertTrue(new TokenService("other-secret", 60, now).verify(token).isEmpty());
    Clock later = Clock.offset(now, java.time.Duration.ofSeconds(61));
    assertTrue(new TokenService("test-secret", 60, later).verify(token).isEmpty());
  }
}
