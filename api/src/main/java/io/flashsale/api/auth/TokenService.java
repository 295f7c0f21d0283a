package io.flashsale.api.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed session tokens: keyId "." base64url("tenant|subject|expiry|issuedAtMillis|tokenId") "."
 * base64url(HMAC-SHA256 of keyId "." claims) under the key of that id. The issued-at time lets a
 * revocation or a logout refuse every token issued until then (Principals.Standing), and bounds
 * the token's life: claims without it, or living longer than the configured lifetime, are refused
 * whoever signed them (docs/DESIGN.md §Tokens and sessions). Tokens are signed with the signing key and verified
 * with whichever configured key their id names, so a new key can be introduced and the old one
 * retired without logging anyone out. A token without a key id (the format before key ids) is
 * verified with the key {@value #DEFAULT_KEY_ID} only. Any change to any part fails verification.
 */
public final class TokenService {
  public static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  /** No dot: the key id is the token's first dot-separated part. */
  public static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9_-]{1,32}");
  /** The id of the single key given as auth.secret (and of the random key of the local default). */
  public static final String DEFAULT_KEY_ID = "default";
  private static final Pattern CLAIMS = Pattern.compile(
      "([A-Za-z0-9._-]{1,64})\\|([A-Za-z0-9._-]{1,64})\\|(\\d{1,12})\\|(\\d{1,15})\\|([A-Za-z0-9_-]{16})");
  private static final SecureRandom IDS = new SecureRandom();

  /**
   * Tokens whose signature was checked, exactly as given, with what they said: a buyer's next
   * request costs no HMAC. Only a verified token enters; its expiry is still checked on every use.
   * Emptied when it reaches {@link #VERIFIED_CAPACITY} (a crowd's worth of sessions).
   */
  private final Map<String, Caller> verified = new java.util.concurrent.ConcurrentHashMap<>();
  static final int VERIFIED_CAPACITY = 50_000;
  /** Mutable only by {@link #retire}: a key removed at run time verifies nothing from then on. */
  private final Map<String, byte[]> keys;
  private final String signingKeyId;
  private final long ttlSeconds;
  private final Clock clock;

  /** One key (id {@value #DEFAULT_KEY_ID}); blank = a random key per start. */
  public TokenService(String secret, long ttlSeconds, Clock clock) {
    this(secret == null || secret.isBlank() ? Map.of() : Map.of(DEFAULT_KEY_ID, secret), null, ttlSeconds, clock);
  }

  /**
   * Every key verifies tokens carrying its id; the one named signingKeyId signs (may be null when
   * there is exactly one key). No keys at all: a random key per start, id {@value #DEFAULT_KEY_ID}.
   */
  public TokenService(Map<String, String> secretsById, String signingKeyId, long ttlSeconds, Clock clock) {
    Map<String, byte[]> k = new LinkedHashMap<>();
    secretsById.forEach((id, secret) -> {
      if (id == null || !KEY_ID.matcher(id).matches()) {
        throw new IllegalArgumentException("token key id '" + id + "' must match " + KEY_ID.pattern());
      }
      if (secret == null || secret.isBlank()) throw new IllegalArgumentException("token key '" + id + "' has no secret");
      k.put(id, secret.getBytes(StandardCharsets.UTF_8));
    });
    if (k.isEmpty()) {
      byte[] random = new byte[32];
      new SecureRandom().nextBytes(random);
      k.put(DEFAULT_KEY_ID, random);
    }
    String signing = signingKeyId == null || signingKeyId.isBlank() ? null : signingKeyId.trim();
    if (signing == null) {
      if (k.size() > 1) {
        throw new IllegalArgumentException("auth.signingKeyId must name the key that signs new tokens, one of "
            + k.keySet());
      }
      signing = k.keySet().iterator().next();
    } else if (!k.containsKey(signing)) {
      throw new IllegalArgumentException("auth.signingKeyId '" + signing + "' is not a configured key " + k.keySet());
    }
    this.keys = new java.util.concurrent.ConcurrentHashMap<>(k);
    this.signingKeyId = signing;
    this.ttlSeconds = ttlSeconds;
    this.clock = clock;
  }

  /**
   * The keys of the auth settings: auth.keys (id → secret) plus auth.secret as the key
   * {@value #DEFAULT_KEY_ID}, so a single-secret configuration keeps working unchanged and can be
   * rotated by adding a key next to it.
   */
  public static Map<String, String> keys(String secret, Map<String, String> keys) {
    Map<String, String> all = new LinkedHashMap<>();
    if (keys != null) all.putAll(keys);
    if (secret != null && !secret.isBlank()) {
      if (all.containsKey(DEFAULT_KEY_ID)) {
        throw new IllegalArgumentException("auth.secret is the key '" + DEFAULT_KEY_ID
            + "'; auth.keys must not have another key of that id");
      }
      all.put(DEFAULT_KEY_ID, secret);
    }
    return all;
  }

  public String signingKeyId() {
    return signingKeyId;
  }

  public String issue(String tenant, String subject) {
    return issue(tenant, subject, clock.instant().getEpochSecond() + ttlSeconds);
  }

  /** A token that expires at the given second (tests and experiments make short-lived ones). */
  public String issue(String tenant, String subject, long expiresAtEpochSecond) {
    byte[] id = new byte[12];
    IDS.nextBytes(id);
    String signed = signingKeyId + "." + b64(tenant + "|" + subject + "|" + expiresAtEpochSecond + "|"
        + clock.millis() + "|" + b64(id));
    return signed + "." + b64(mac(keys.get(signingKeyId), signed));
  }

  /**
   * The CSRF token that goes with a session token (derived, so nothing is stored), under the
   * token's own key, so it stays valid when the signing key changes; null for an unknown key.
   */
  public String csrfFor(String token) {
    byte[] key = keys.get(keyIdOf(token));
    return key == null ? null : b64(mac(key, "csrf|" + token));
  }

  /**
   * Removes a key at run time (a leaked key, before the configuration without it is deployed):
   * every token it signed is refused from now on, open event streams included. The signing key
   * cannot be retired (name another one and restart first). False when no such key is configured.
   */
  public boolean retire(String keyId) {
    if (signingKeyId.equals(keyId)) {
      throw new IllegalArgumentException("'" + keyId + "' signs new tokens; configure another auth.signingKeyId first");
    }
    if (keys.remove(keyId) == null) return false;
    verified.clear();
    return true;
  }

  /** Whether the key that signed the caller's token still verifies (false once {@link #retire}d). */
  public boolean keyStillValid(Caller caller) {
    return caller.keyId() == null || keys.containsKey(caller.keyId());
  }

  /** How many verified tokens are kept now (at most {@link #VERIFIED_CAPACITY}). */
  int verifiedCount() {
    return verified.size();
  }

  public long ttlSeconds() {
    return ttlSeconds;
  }

  public Optional<Caller> verify(String token) {
    if (token == null) return Optional.empty();
    Caller known = verified.get(token);
    if (known != null) {
      if (known.expiresAtEpochSecond() >= clock.instant().getEpochSecond()) return Optional.of(known);
      verified.remove(token);
      return Optional.empty();
    }
    Optional<Caller> checked = check(token);
    if (checked.isPresent()) {
      if (verified.size() >= VERIFIED_CAPACITY) verified.clear();
      verified.put(token, checked.get());
    }
    return checked;
  }

  /** The signature, the claims and the expiry of a token not seen verified before. */
  private Optional<Caller> check(String token) {
    String[] parts = token.split("\\.", -1);
    String keyId;
    String claims;
    String signed;
    if (parts.length == 3) {
      keyId = parts[0];
      claims = parts[1];
      signed = parts[0] + "." + parts[1];
    } else if (parts.length == 2) {
      keyId = DEFAULT_KEY_ID;
      claims = parts[0];
      signed = parts[0];
    } else {
      return Optional.empty();
    }
    byte[] key = keys.get(keyId);
    if (key == null || claims.isEmpty() || parts[parts.length - 1].isEmpty()) return Optional.empty();
    byte[] given;
    String decoded;
    try {
      given = Base64.getUrlDecoder().decode(parts[parts.length - 1]);
      decoded = new String(Base64.getUrlDecoder().decode(claims), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
    if (!MessageDigest.isEqual(given, mac(key, signed))) return Optional.empty();
    Matcher m = CLAIMS.matcher(decoded);
    if (!m.matches()) return Optional.empty();
    long expiresAt = Long.parseLong(m.group(3));
    if (expiresAt < clock.instant().getEpochSecond()) return Optional.empty();
    long issuedAt = Long.parseLong(m.group(4));
    if (!plausible(issuedAt, expiresAt)) return Optional.empty();
    return Optional.of(new Caller(m.group(1), m.group(2), expiresAt, issuedAt, m.group(5), keyId));
  }

  /**
   * A token issued in the future (a signer's clock far ahead would outlive a logout by that much)
   * or living longer than the configured lifetime (the caller view forgets a logout after it) is
   * refused. {@link #CLOCK_SKEW_MILLIS} allows for instances whose clocks differ a little.
   */
  private boolean plausible(long issuedAtMillis, long expiresAtEpochSecond) {
    if (issuedAtMillis > clock.millis() + CLOCK_SKEW_MILLIS) return false;
    return expiresAtEpochSecond * 1000 - issuedAtMillis <= ttlSeconds * 1000 + CLOCK_SKEW_MILLIS;
  }

  /** How far the clocks of the instances that issue and check tokens may differ. */
  public static final long CLOCK_SKEW_MILLIS = 60_000;

  private static String keyIdOf(String token) {
    if (token == null) return null;
    String[] parts = token.split("\\.", -1);
    return parts.length == 3 ? parts[0] : parts.length == 2 ? DEFAULT_KEY_ID : null;
  }

  private static byte[] mac(byte[] key, String data) {
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
