package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class SecretsCheckTest {
  private static final String GOOD = "0123456789abcdef0123456789abcdef";

  private static FlashsaleConfiguration production(String tokenSecret, String callbackSecret) {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    cfg.embedded = false;
    cfg.auth.secret = tokenSecret;
    cfg.channel.callbackSecret = callbackSecret;
    cfg.channel.merchantKey = "fedcba9876543210fedcba9876543210";
    cfg.auth.adminToken = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
    cfg.database.password = "9f8e7d6c5b4a39281706f5e4d3c2b1a0";
    cfg.consumer.deliverySecret = "d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f";
    cfg.channel.baseUrl = "https://channel.example";
    return cfg;
  }

  @Test
  void theLocalDefaultMakesItsOwnSecrets() {
    FlashsaleConfiguration local = new FlashsaleConfiguration();
    local.embedded = true;
    assertTrue(SecretsCheck.problems(local).isEmpty());
  }

  /** A production file that forgets `embedded` gets the production checks. */
  @Test
  void aConfigurationThatForgetsEmbeddedIsProduction() {
    FlashsaleConfiguration forgot = new FlashsaleConfiguration();
    assertFalse(forgot.embedded);
    assertEquals(List.of("auth.secret is missing", "channel.callbackSecret is missing", "channel.merchantKey is missing",
        "auth.adminToken is missing", "consumer.deliverySecret is missing", "database.password is missing"),
        SecretsCheck.problems(forgot));
  }

  /** Dev login hands out tokens for any tenant/subject: outside the local default it needs a second, named setting. */
  @Test
  void devLoginOutsideTheLocalDefaultNeedsItsAcknowledgement() {
    FlashsaleConfiguration cfg = production(GOOD, GOOD + "x");
    cfg.auth.devLogin = true;
    assertEquals(List.of("auth.devLogin is on (POST /session hands out tokens for any tenant/subject); outside the"
        + " local default it also needs auth.devLoginOutsideLocalDefault: true"), SecretsCheck.problems(cfg));
    cfg.auth.devLoginOutsideLocalDefault = true;
    assertTrue(SecretsCheck.problems(cfg).isEmpty(), "acknowledged");
    cfg.auth.devLogin = null;
    cfg.auth.devLoginOutsideLocalDefault = false;
    assertTrue(SecretsCheck.problems(cfg).isEmpty(), "unset: off outside the local default");
  }

  @Test
  void productionRefusesMissingShortPlaceholderAndUnsetSecrets() {
    assertEquals(List.of("auth.secret is missing", "channel.callbackSecret is missing"),
        SecretsCheck.problems(production("", null)));
    assertEquals(List.of("auth.secret is the placeholder 'change-me-too'",
            "channel.callbackSecret is the placeholder 'change-me'"),
        SecretsCheck.problems(production("change-me-too", "change-me")));
    assertEquals(List.of("auth.secret is shorter than 32 bytes"), SecretsCheck.problems(production("short", GOOD)));
    assertEquals(List.of("channel.callbackSecret is an unset environment variable (${FLASHSALE_CALLBACK_SECRET})"),
        SecretsCheck.problems(production(GOOD, "${FLASHSALE_CALLBACK_SECRET}")));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> SecretsCheck.require(production("change-me-too", "change-me")));
    assertTrue(e.getMessage().startsWith("refusing to start outside the local default"), e.getMessage());
    assertTrue(SecretsCheck.problems(production(GOOD, GOOD + "x")).isEmpty());
  }

  /** The channel's API is the merchant's: its key is a real secret of its own, not the callback secret. */
  @Test
  void productionRefusesAMissingOrSharedMerchantKey() {
    FlashsaleConfiguration cfg = production(GOOD, GOOD + "x");
    cfg.channel.merchantKey = "";
    assertEquals(List.of("channel.merchantKey is missing"), SecretsCheck.problems(cfg));
    cfg.channel.merchantKey = "change-me";
    assertEquals(List.of("channel.merchantKey is the placeholder 'change-me'"), SecretsCheck.problems(cfg));
    cfg.channel.merchantKey = GOOD + "x";
    assertEquals(List.of("channel.merchantKey is the callback secret (the channel's API and its callbacks need keys of"
        + " their own)"), SecretsCheck.problems(cfg));
  }

  /** Outside the local default the admin port needs a credential of its own. */
  @Test
  void productionRefusesAMissingAdminToken() {
    FlashsaleConfiguration cfg = production(GOOD, GOOD + "x");
    cfg.auth.adminToken = "";
    assertEquals(List.of("auth.adminToken is missing"), SecretsCheck.problems(cfg));
    cfg.auth.adminToken = "${FLASHSALE_ADMIN_TOKEN}";
    assertEquals(List.of("auth.adminToken is an unset environment variable (${FLASHSALE_ADMIN_TOKEN})"),
        SecretsCheck.problems(cfg));
  }

  @Test
  void everyTokenKeyIsChecked() {
    FlashsaleConfiguration cfg = production("", GOOD);
    cfg.auth.keys.put("k2", GOOD);
    cfg.auth.keys.put("k1", "change-me");
    cfg.auth.keys.put("k0", "${FLASHSALE_TOKEN_KEY_K0}");
    assertEquals(List.of("auth.keys.k1 is the placeholder 'change-me'",
        "auth.keys.k0 is an unset environment variable (${FLASHSALE_TOKEN_KEY_K0})"), SecretsCheck.problems(cfg));
    cfg.auth.keys.remove("k1");
    cfg.auth.keys.remove("k0");
    assertTrue(SecretsCheck.problems(cfg).isEmpty(), "keys alone, no auth.secret: fine");
    cfg.auth.secret = "short";
    assertEquals(List.of("auth.secret is shorter than 32 bytes"), SecretsCheck.problems(cfg),
        "auth.secret next to keys is a key too");
  }

  /** The shipped .env.example's values (change-me-…) and every secret a deployment uses, database and engine included. */
  @Test
  void productionRefusesPlaceholdersEverywhere() {
    FlashsaleConfiguration cfg = production(GOOD, GOOD + "x");
    cfg.database.password = "change-me-flashsale-db";
    cfg.consumer.deliverySecret = "change-me-delivery-secret";
    cfg.temporal.apiKey = "${TEMPORAL_API_KEY}";
    assertEquals(List.of("consumer.deliverySecret is the placeholder 'change-me-delivery-secret'",
        "database.password is the placeholder 'change-me-flashsale-db'",
        "temporal.apiKey is an unset environment variable (${TEMPORAL_API_KEY})"), SecretsCheck.problems(cfg));
    cfg.consumer.enabled = false;
    cfg.relay.enabled = false;
    cfg.database.password = GOOD;
    cfg.temporal.apiKey = "";
    assertTrue(SecretsCheck.problems(cfg).isEmpty(), "no consumer and no relay here: no delivery secret needed");
  }

  /** The merchant key and the channel's answers (a spoofed CHARGED) travel in clear over http. */
  @Test
  void productionRefusesAPlainHttpChannelUnlessAcknowledged() {
    FlashsaleConfiguration cfg = production(GOOD, GOOD + "x");
    cfg.channel.baseUrl = "http://channel.example:8090";
    assertEquals(List.of("channel.baseUrl is not https (the merchant key and the channel's answers would travel in"
        + " clear); a lab channel over http also needs channel.plainHttpOutsideLocalDefault: true"), SecretsCheck.problems(cfg));
    cfg.channel.plainHttpOutsideLocalDefault = true;
    assertTrue(SecretsCheck.problems(cfg).isEmpty(), "acknowledged (the compose demo's stub)");
  }

  /** A worker checks what it uses (the admin token proves operator signals), not the token keys it never reads. */
  @Test
  void aWorkerChecksTheSecretsItUses() {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    cfg.channel.baseUrl = "http://channel.example:8090";
    assertEquals(List.of("channel.merchantKey is missing", "auth.adminToken is missing", "database.password is missing",
        "channel.baseUrl is not https (the merchant key and the channel's answers would travel in clear); a lab"
            + " channel over http also needs channel.plainHttpOutsideLocalDefault: true"),
        SecretsCheck.workerProblems(cfg));
    cfg.channel.merchantKey = GOOD;
    cfg.auth.adminToken = GOOD + "z";
    cfg.database.password = GOOD + "y";
    cfg.channel.baseUrl = "https://channel.example";
    assertTrue(SecretsCheck.workerProblems(cfg).isEmpty());
    assertThrows(IllegalStateException.class, () -> SecretsCheck.requireForWorker(new FlashsaleConfiguration()));
  }

  @Test
  void devLoginIsOnOnlyInTheLocalDefaultUnlessSetExplicitly() {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    assertTrue(cfg.auth.devLoginEnabled(true));
    assertFalse(cfg.auth.devLoginEnabled(false));
    cfg.auth.devLogin = true;
    assertTrue(cfg.auth.devLoginEnabled(false));
    cfg.auth.devLogin = false;
    assertFalse(cfg.auth.devLoginEnabled(true));
  }
}
