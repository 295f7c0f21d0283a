package io.flashsale.api.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed session tokens: base64url("tenant|subject|expiry") "." base64url(HMAC-SHA256). Any
 * change to either half fails verification.
 */
public final class TokenService {
  public static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final Pattern CLAIMS = Pattern.compile("([A-Za-z0-9._-]{1,64})\\|([A-Za-z0-9._-]{1,64})\\|(\\d{1,12})");

  private final byte[] key;
  private final long ttlSeconds;
  private final Clock clock;

  public TokenService(String secret, long ttlSeconds, Clock clock) {
    if (secret == null || secret.isBlank()) {
      this.key = new byte[32];
      new SecureRandom().nextBytes(key);
    } else {
      this.key = secret.getBytes(StandardCharsets.UTF_8);
    }
    this.ttlSeconds = ttlSeconds;
    this.clock = clock;
  }

  public String issue(String tenant, String subject) {
    long exp = clock.instant().getEpochSecond() + ttlSeconds;
    String claims = b64(tenant + "|" + subject + "|" + exp);
    return claims + "." + b64(mac(claims));
  }

  /** The CSRF token that goes with a session token (derived, so nothing is stored). */
  public String csrfFor(String token) {
    return b64(mac("csrf|" + token));
  }

  public long ttlSeconds() {
    return ttlSeconds;
  }

  public Optional<Caller> verify(String token) {
    if (token == null) return Optional.empty();
    int dot = token.indexOf('.');
    if (dot <= 0 || dot == token.length() - 1) return Optional.empty();
    String claims = token.substring(0, dot);
    byte[] given;
    String decoded;
    try {
      given = Base64.getUrlDecoder().decode(token.substring(dot + 1));
      decoded = new String(Base64.getUrlDecoder().decode(claims), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    if (!MessageDigest.isEqual(given, mac(claims))) return Optional.empty();
    Matcher m = CLAIMS.matcher(decoded);
    if (!m.matches()) return Optional.empty();
    if (Long.parseLong(m.group(3)) < clock.instant().getEpochSecond()) return Optional.empty();
    return Optional.of(new Caller(m.group(1), m.group(2)));
  }

  private byte[] mac(String data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String b64(String s) {
    return b64(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String b64(byte[] b) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }
}
