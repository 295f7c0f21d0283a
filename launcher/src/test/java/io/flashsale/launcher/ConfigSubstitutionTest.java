package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dropwizard.core.setup.Bootstrap;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** ${VAR} and ${VAR:-default} in the YAML come from the environment, not as literal text. */
class ConfigSubstitutionTest {
  @Test
  void variablesAreSubstitutedWithTheirDefaults() throws Exception {
    FlashsaleApplication app = new FlashsaleApplication();
    Bootstrap<FlashsaleConfiguration> bootstrap = new Bootstrap<>(app);
    app.initialize(bootstrap);
    String text;
    try (InputStream in = bootstrap.getConfigurationSourceProvider().open("production.example.yml")) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    // FLASHSALE_DEV_LOGIN is not set in the test environment: its default applies
    assertTrue(text.contains("devLogin: false"), text);
    assertFalse(text.contains("${FLASHSALE_DEV_LOGIN"), "no variable left as literal text");
  }
}
