package io.flashsale.api.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class TokenServiceTest {
  private final Clock now = Clock.fixed(Instant.parse("2026-11-30T00:00:00Z"), ZoneOffset.UTC);
  private final TokenService tokens = new TokenService("test-secret", 60, now);
  private final long nowSeconds = now.instant().getEpochSecond();

  @Test
  void issuedTokenVerifies() {
    Caller c = tokens.verify(tokens.issue("t1", "user-0042")).orElseThrow();
    assertEquals(new Caller("t1", "user-0042", nowSeconds + 60, now.millis(), c.tokenId(), TokenService.DEFAULT_KEY_ID), c);
  }

  @Test
  void everyTokenCarriesItsIssuedAtTimeAndAnIdOfItsOwn() {
    Caller first = tokens.verify(tokens.issue("t1", "user-0042")).orElseThrow();
    Caller second = tokens.verify(tokens.issue("t1", "user-0042")).orElseThrow();
    assertEquals(now.millis(), first.issuedAtMillis());
    assertTrue(first.tokenId().matches("[A-Za-z0-9_-]{16}"), first.tokenId());
    assertNotEquals(first.tokenId(), second.tokenId(), "two logins at the same instant are two tokens");
  }

  @Test
  void aTokenWithoutIssuedAtIsRefusedWhoeverSignedIt() throws Exception {
    // correctly signed, with the key of the service: an external login's token of the old format
    String signed = "default." + b64(("t1|user-0042|" + (nowSeconds + 30)).getBytes(StandardCharsets.UTF_8));
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec("test-secret".getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    assertTrue(tokens.verify(signed + "." + b64(mac.doFinal(signed.getBytes(StandardCharsets.UTF_8)))).isEmpty(),
        "no issued-at: no bound on its life, and a logout would be forgotten before it expires");
    String withIssuedAt = "default." + b64(("t1|user-0042|" + (nowSeconds + 30) + "|" + now.millis() + "|"
        + "AAAAAAAAAAAAAAAA").getBytes(StandardCharsets.UTF_8));
    assertTrue(tokens.verify(withIssuedAt + "." + b64(mac.doFinal(withIssuedAt.getBytes(StandardCharsets.UTF_8))))
        .isPresent(), "the same claims with issued-at and id verify");
  }

  @Test
  void aTokenIssuedInTheFutureOrLivingPastTheLifetimeIsRefused() {
    Clock ahead = Clock.offset(now, java.time.Duration.ofMillis(TokenService.CLOCK_SKEW_MILLIS + 1_000));
    String fromTheFuture = new TokenService("test-secret", 60, ahead).issue("t1", "user-0042");
    assertTrue(tokens.verify(fromTheFuture).isEmpty(), "a signer's clock far ahead would outlive a logout");
    Clock slightlyAhead = Clock.offset(now, java.time.Duration.ofMillis(500));
    assertTrue(tokens.verify(new TokenService("test-secret", 60, slightlyAhead).issue("t1", "user-0042")).isPresent(),
        "instances whose clocks differ a little still trust each other's tokens");
    assertTrue(tokens.verify(tokens.issue("t1", "user-0042", nowSeconds + 3_600)).isEmpty(),
        "an hour's token where tokens live a minute: the caller view forgets logouts after the lifetime");
    assertTrue(tokens.verify(tokens.issue("t1", "user-0042", nowSeconds + 60)).isPresent());
  }

  @Test
  void aRetiredKeyVerifiesNothingFromThenOnAndTheSigningKeyCannotBeRetired() {
    TokenService svc = new TokenService(Map.of("k1", "secret-one", "k2", "secret-two"), "k2", 60, now);
    String old = new TokenService(Map.of("k1", "secret-one"), null, 60, now).issue("t1", "user-0042");
    Caller oldCaller = svc.verify(old).orElseThrow(); // verified once: the cache must not keep it alive
    assertTrue(svc.keyStillValid(oldCaller));
    assertTrue(svc.retire("k1"));
    assertTrue(svc.verify(old).isEmpty(), "a token of the retired key");
    assertFalse(svc.keyStillValid(oldCaller), "an open stream of that token learns it");
    assertFalse(svc.retire("k1"), "already retired");
    assertFalse(svc.retire("k9"), "not configured");
    assertThrows(IllegalArgumentException.class, () -> svc.retire("k2"));
    assertTrue(svc.verify(svc.issue("t1", "user-0042")).isPresent(), "the signing key still works");
  }

  @Test
  void tamperedClaimsAreRefused() {
    String token = tokens.issue("t1", "user-0042");
    String[] parts = token.split("\\.");
    String forgedClaims = Base64.getUrlEncoder().withoutPadding()
        .encodeToString("t1|user-0043|9999999999".getBytes());
    assertTrue(tokens.verify(parts[0] + "." + forgedClaims + "." + parts[2]).isEmpty());
  }

  @Test
  void tamperedSignatureAndGarbageAreRefused() {
    String token = tokens.issue("t1", "user-0042");
    int at = token.length() - 10;
    assertTrue(tokens.verify(token.substring(0, at) + (token.charAt(at) == 'A' ? 'B' : 'A') + token.substring(at + 1))
        .isEmpty());
    assertTrue(tokens.verify("not-a-token").isEmpty());
    assertTrue(tokens.verify("a.b.c.d").isEmpty());
    assertTrue(tokens.verify("..").isEmpty());
    assertTrue(tokens.verify("").isEmpty());
    assertTrue(tokens.verify(null).isEmpty());
  }

  @Test
  void aTokenVerifiedOnceStillExpiresAndItsForgeriesStayRefused() {
    // a clock that moves: the same service first verifies the token, then sees it expired
    java.util.concurrent.atomic.AtomicLong offset = new java.util.concurrent.atomic.AtomicLong();
    Clock moving = new Clock() {
      @Override public ZoneOffset getZone() { return ZoneOffset.UTC; }
      @Override public Clock withZone(java.time.ZoneId zone) { return this; }
      @Override public Instant instant() { return now.instant().plusSeconds(offset.get()); }
    };
    TokenService service = new TokenService("test-secret", 60, moving);
    String token = service.issue("t1", "user-0042");
    assertEquals("user-0042", service.verify(token).orElseThrow().subject());
    assertEquals("user-0042", service.verify(token).orElseThrow().subject(), "verified again, from what it said");
    int at = token.length() - 10;
    String forged = token.substring(0, at) + (token.charAt(at) == '0' ? '1' : '0') + token.substring(at + 1);
    assertTrue(service.verify(forged).isEmpty(), "a token one character off its verified original");
    assertTrue(service.verify(token + "x").isEmpty());
    offset.set(61);
    assertTrue(service.verify(token).isEmpty(), "a verified token expires all the same");
    offset.set(0);
    assertTrue(service.verify(token).isPresent(), "and verifies again by its signature, not from memory");
  }

  @Test
  void pastItsCapacityTheVerifiedTokensAreForgottenAndCheckedAgain() {
    for (int i = 0; i <= TokenService.VERIFIED_CAPACITY; i++) {
      assertTrue(tokens.verify(tokens.issue("t1", "user-" + i)).isPresent());
      assertTrue(tokens.verifiedCount() <= TokenService.VERIFIED_CAPACITY, "kept past the capacity");
    }
    assertTrue(tokens.verifiedCount() < TokenService.VERIFIED_CAPACITY, "emptied when full");
    String last = tokens.issue("t1", "user-last");
    assertTrue(tokens.verify(last).isPresent());
    assertTrue(tokens.verify(tokens.issue("t1", "user-0")).isPresent());
  }

  @Test
  void otherKeyAndExpiryAreRefused() {
    String token = tokens.issue("t1", "user-0042");
    assertTrue(new TokenService("other-secret", 60, now).verify(token).isEmpty());
    Clock later = Clock.offset(now, java.time.Duration.ofSeconds(61));
    assertTrue(new TokenService("test-secret", 60, later).verify(token).isEmpty());
    assertTrue(tokens.verify(tokens.issue("t1", "user-0042", nowSeconds - 1)).isEmpty(), "expired a second ago");
  }

  @Test
  void tokensCarryTheSigningKeyId() {
    assertTrue(tokens.issue("t1", "u").startsWith("default."), "auth.secret alone is the key 'default'");
    TokenService rotated = new TokenService(Map.of("k1", "s1", "k2", "s2"), "k2", 60, now);
    assertTrue(rotated.issue("t1", "u").startsWith("k2."));
    assertEquals("k2", rotated.signingKeyId());
  }

  @Test
  void rotationKeepsOldTokensValidUntilTheirKeyIsRemoved() {
    TokenService before = new TokenService(Map.of("k1", "secret-one"), null, 60, now);
    String old = before.issue("t1", "user-0042");
    String oldCsrf = before.csrfFor(old);

    // k2 added and signing: tokens signed with k1 still verify, by their key id
    Map<String, String> both = new LinkedHashMap<>();
    both.put("k2", "secret-two");
    both.put("k1", "secret-one");
    TokenService during = new TokenService(both, "k2", 60, now);
    assertEquals("user-0042", during.verify(old).orElseThrow().subject());
    assertEquals(oldCsrf, during.csrfFor(old), "the CSRF token of an old session stays valid");
    String fresh = during.issue("t1", "user-0042");
    assertTrue(fresh.startsWith("k2."));
    assertTrue(during.verify(fresh).isPresent());
    assertTrue(before.verify(fresh).isEmpty(), "a service that does not know k2 yet refuses k2 tokens");

    // k1 removed: its tokens are refused, k2's are not
    TokenService after = new TokenService(Map.of("k2", "secret-two"), null, 60, now);
    assertTrue(after.verify(old).isEmpty());
    assertTrue(after.verify(fresh).isPresent());
    assertEquals(null, after.csrfFor(old));
  }

  @Test
  void aTokenCannotNameAnotherKeyId() {
    TokenService svc = new TokenService(Map.of("k1", "secret-one", "k2", "secret-two"), "k1", 60, now);
    String token = svc.issue("t1", "user-0042");
    assertTrue(svc.verify("k2" + token.substring(2)).isEmpty());
    assertTrue(svc.verify("nope" + token.substring(2)).isEmpty());
  }

  @Test
  void aTokenWithoutKeyIdIsVerifiedWithTheDefaultKeyOnly() throws Exception {
    // the format before key ids: base64(claims) "." base64(HMAC(claims))
    String claims = b64(("t1|user-0042|" + (nowSeconds + 30) + "|" + now.millis() + "|AAAAAAAAAAAAAAAA")
        .getBytes(StandardCharsets.UTF_8));
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec("test-secret".getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    String legacy = claims + "." + b64(mac.doFinal(claims.getBytes(StandardCharsets.UTF_8)));
    assertEquals("user-0042", tokens.verify(legacy).orElseThrow().subject());
    assertNotNull(tokens.csrfFor(legacy));
    assertTrue(new TokenService(Map.of("k1", "test-secret"), null, 60, now).verify(legacy).isEmpty());
  }

  @Test
  void keyConfigurationMistakesStopTheStart() {
    assertThrows(IllegalArgumentException.class, () -> new TokenService(Map.of("k1", "a", "k2", "b"), null, 60, now),
        "two keys and no signingKeyId");
    assertThrows(IllegalArgumentException.class, () -> new TokenService(Map.of("k1", "a"), "k9", 60, now));
    assertThrows(IllegalArgumentException.class, () -> new TokenService(Map.of("k.1", "a"), null, 60, now));
    assertThrows(IllegalArgumentException.class, () -> new TokenService(Map.of("k1", " "), null, 60, now));
    assertThrows(IllegalArgumentException.class, () -> TokenService.keys("s", Map.of("default", "t")));
    assertEquals(Map.of("k2", "new", "default", "old"), TokenService.keys("old", Map.of("k2", "new")));
    assertEquals(Map.of("default", "old"), TokenService.keys("old", null));
  }

  private static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }
}
