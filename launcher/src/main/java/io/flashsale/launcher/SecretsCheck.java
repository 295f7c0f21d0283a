package io.flashsale.launcher;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Outside the local default (embedded: false) the service holds real money: it refuses to start
 * with a token key (auth.secret and every one of auth.keys), callback secret (and a set previous
 * one), channel merchant key, admin token, database password, delivery secret (when a consumer or
 * relay runs here) or a set Temporal API key that is missing, shorter than 32 bytes, a known
 * placeholder (change-me…), or a ${VAR} that the environment did not fill; with dev login on, or a
 * channel reached over plain http, unless a second setting acknowledges it. The local default
 * makes its own random secrets.
 */
public final class SecretsCheck {
  /** The shipped examples' placeholders and the usual suspects. */
  static final Set<String> PLACEHOLDERS = Set.of("change-me", "change-me-too", "changeme", "secret", "password",
      "default", "test");
  static final int MIN_BYTES = 32;

  private SecretsCheck() {}

  /** What is wrong for a server (API, consumer, relay, maybe a worker), one line each; empty when it may start. */
  public static List<String> problems(FlashsaleConfiguration cfg) {
    List<String> out = new ArrayList<>();
    if (cfg.embedded) return out;
    // every token key can sign or verify: each one must be a real secret
    boolean anyKey = cfg.auth.keys != null && !cfg.auth.keys.isEmpty();
    if (!anyKey || (cfg.auth.secret != null && !cfg.auth.secret.isBlank())) check("auth.secret", cfg.auth.secret, out);
    if (anyKey) cfg.auth.keys.forEach((id, secret) -> check("auth.keys." + id, secret, out));
    check("channel.callbackSecret", cfg.channel.callbackSecret, out);
    if (cfg.channel.previousCallbackSecret != null && !cfg.channel.previousCallbackSecret.isBlank()) {
      check("channel.previousCallbackSecret", cfg.channel.previousCallbackSecret, out);
    }
    check("channel.merchantKey", cfg.channel.merchantKey, out);
    check("auth.adminToken", cfg.auth.adminToken, out);
    if (cfg.consumer.enabled || cfg.relay.enabled) check("consumer.deliverySecret", cfg.consumer.deliverySecret, out);
    whatAWorkerUses(cfg, out);
    if (cfg.auth.devLoginEnabled(false) && !cfg.auth.devLoginOutsideLocalDefault) {
      out.add("auth.devLogin is on (POST /session hands out tokens for any tenant/subject); outside the local default"
          + " it also needs auth.devLoginOutsideLocalDefault: true");
    }
    if (cfg.channel.merchantKey != null && !cfg.channel.merchantKey.isBlank()
        && cfg.channel.merchantKey.equals(cfg.channel.callbackSecret)) {
      out.add("channel.merchantKey is the callback secret (the channel's API and its callbacks need keys of their own)");
    }
    return out;
  }

  /** What is wrong for a worker alone (./flashsale worker): only the secrets a worker uses. */
  public static List<String> workerProblems(FlashsaleConfiguration cfg) {
    List<String> out = new ArrayList<>();
    if (cfg.embedded) return out;
    check("channel.merchantKey", cfg.channel.merchantKey, out);
    check("auth.adminToken", cfg.auth.adminToken, out); // an operator's notice signals are proved with it
    whatAWorkerUses(cfg, out);
    return out;
  }

  /** The database, the engine, the payload keys and the channel's transport (merchant key apart). */
  private static void whatAWorkerUses(FlashsaleConfiguration cfg, List<String> out) {
    check("database.password", cfg.database.password, out);
    if (cfg.temporal.apiKey != null && !cfg.temporal.apiKey.isBlank()) check("temporal.apiKey", cfg.temporal.apiKey, out);
    if (cfg.temporal.payloadEncryption.enabled) {
      if (cfg.temporal.payloadEncryption.keys.isEmpty()) out.add("temporal.payloadEncryption.keys is missing");
      cfg.temporal.payloadEncryption.keys.forEach((id, key) -> check("temporal.payloadEncryption.keys." + id, key, out));
    }
    String channelUrl = cfg.channel.baseUrl == null ? "" : cfg.channel.baseUrl.trim().toLowerCase(Locale.ROOT);
    if (!channelUrl.isEmpty() && !channelUrl.startsWith("https://") && !cfg.channel.plainHttpOutsideLocalDefault) {
      out.add("channel.baseUrl is not https (the merchant key and the channel's answers would travel in clear);"
          + " a lab channel over http also needs channel.plainHttpOutsideLocalDefault: true");
    }
  }

  public static void require(FlashsaleConfiguration cfg) {
    refuseIfAny(problems(cfg));
  }

  public static void requireForWorker(FlashsaleConfiguration cfg) {
    refuseIfAny(workerProblems(cfg));
  }

  private static void refuseIfAny(List<String> problems) {
    if (!problems.isEmpty()) {
      throw new IllegalStateException("refusing to start outside the local default: " + String.join("; ", problems)
          + ". Set them from the environment (see README: production secrets), e.g. with openssl rand -hex 32");
    }
  }

  /** One of the usual suspects, or any value of the shipped examples' change-me… family. */
  static boolean isPlaceholder(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    return PLACEHOLDERS.contains(v) || v.startsWith("change-me") || v.startsWith("changeme");
  }

  /** What is wrong with one secret (missing, unset, placeholder, short), or null. */
  public static String problem(String name, String value) {
    List<String> out = new ArrayList<>();
    check(name, value, out);
    return out.isEmpty() ? null : out.get(0);
  }

  private static void check(String name, String value, List<String> out) {
    if (value == null || value.isBlank()) {
      out.add(name + " is missing");
    } else if (value.contains("${")) {
      out.add(name + " is an unset environment variable (" + value + ")");
    } else if (isPlaceholder(value)) {
      out.add(name + " is the placeholder '" + value + "'");
    } else if (value.getBytes(StandardCharsets.UTF_8).length < MIN_BYTES) {
      out.add(name + " is shorter than " + MIN_BYTES + " bytes");
    }
  }
}
