package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dropwizard.configuration.ConfigurationException;
import io.dropwizard.configuration.ConfigurationFactory;
import io.dropwizard.configuration.ConfigurationParsingException;
import io.dropwizard.configuration.ConfigurationSourceProvider;
import io.dropwizard.configuration.ConfigurationValidationException;
import io.dropwizard.configuration.DefaultConfigurationFactoryFactory;
import io.dropwizard.configuration.YamlConfigurationFactory;
import io.dropwizard.jackson.Jackson;
import io.dropwizard.jersey.validation.Validators;
import io.dropwizard.util.DataSize;
import io.dropwizard.util.Duration;
import io.dropwizard.validation.MaxDuration;
import io.flashsale.workflows.OrderSettings;
import io.flashsale.workflows.OrderActivities;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The configuration read as the service reads it (Dropwizard's YAML factory and its default
 * validator): the shipped files load, and a bad value fails with a message naming the setting.
 */
class ConfigurationValidationTest {

  private static FlashsaleConfiguration load(String yaml) throws Exception {
    ConfigurationSourceProvider text = path -> new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8));
    // the factory the service's bootstrap uses: YAML, unknown keys refused, Dropwizard's default validator
    ConfigurationFactory<FlashsaleConfiguration> factory = new DefaultConfigurationFactoryFactory<FlashsaleConfiguration>()
        .create(FlashsaleConfiguration.class, Validators.newValidator(), Jackson.newObjectMapper(), "dw");
    assertInstanceOf(YamlConfigurationFactory.class, factory);
    return factory.build(text, "test.yml");
  }

  /** The start fails with an exception of this type whose message names every one of {@code settings}. */
  private static <E extends ConfigurationException> String refused(Class<E> type, String yaml, String... settings) {
    E e = assertThrows(type, () -> load(yaml));
    String message = e.getMessage();
    for (String setting : settings) {
      assertTrue(message.contains(setting), "the error names " + setting + ": " + message);
    }
    return message;
  }

  @Test
  void theDefaultsAreValid() throws Exception {
    FlashsaleConfiguration cfg = load("embedded: true\n");
    assertEquals(Duration.minutes(1), cfg.orders.reservationTtl);
    assertEquals(DataSize.kibibytes(16), cfg.maxBodySize);
    assertEquals(Duration.seconds(5), cfg.database.connectionTimeout);
    assertEquals(Duration.hours(1), cfg.auth.tokenTtl);
  }

  @Test
  void durationsAndSizesCarryTheirUnit() throws Exception {
    FlashsaleConfiguration cfg = load("""
        maxBodySize: 64KiB
        createLatencyBudget: 0s
        orders:
          reservationTtl: 15m
          lateNoticeWindow: 2 hours
        channel:
          timeout: 300ms
        auth:
          tokenTtl: 1d
        stockView:
          refreshInterval: 500ms
          bound: 1s
        """);
    assertEquals(64 * 1024, cfg.maxBodySize.toBytes());
    assertEquals(0, cfg.createLatencyBudget.toMilliseconds());
    assertEquals(java.time.Duration.ofMinutes(15), cfg.orders.reservationTtl.toJavaDuration());
    assertEquals(java.time.Duration.ofHours(2), cfg.orders.lateNoticeWindow.toJavaDuration());
    assertEquals(300, cfg.channel.timeout.toMilliseconds());
    assertEquals(86_400, cfg.auth.tokenTtl.toSeconds());
    assertEquals(500, cfg.stockView.refreshInterval.toMilliseconds());
  }

  @Test
  void theDefaultTimingsAreTheWorkflowsDefaults() {
    // but the channel's queue: the service sends the channel's activities to their own queue, a run
    // started with OrderSettings.defaults() (workflow tests) to its workflow's
    assertEquals(OrderSettings.defaults().withChannelTaskQueue(io.flashsale.workflows.WorkflowIds.CHANNEL_TASK_QUEUE),
        Assembly.orderSettings(new FlashsaleConfiguration.OrderTimings()));
  }

  @Test
  void aNegativeDurationIsRefusedNamingTheSetting() {
    refused(ConfigurationParsingException.class, "orders:\n  reservationTtl: -5s\n", "orders.reservationTtl", "-5s");
  }

  @Test
  void aDurationWithoutItsUnitIsRefusedNamingTheSetting() {
    refused(ConfigurationParsingException.class, "channel:\n  timeout: 300\n", "channel.timeout");
  }

  @Test
  void aDurationBelowItsMinimumIsRefusedNamingTheSetting() {
    refused(ConfigurationValidationException.class, "orders:\n  reservationTtl: 0s\n", "orders.reservationTtl");
    refused(ConfigurationValidationException.class, "relay:\n  deliveryTimeout: 0ms\n", "relay.deliveryTimeout");
    refused(ConfigurationValidationException.class, "database:\n  connectionTimeout: 100ms\n",
        "database.connectionTimeout");
  }

  @Test
  void aSizeBelowItsMinimumIsRefusedNamingTheSetting() {
    refused(ConfigurationValidationException.class, "maxBodySize: 0B\n", "maxBodySize");
  }

  @Test
  void aMissingRequiredFieldIsRefusedNamingTheSetting() {
    refused(ConfigurationValidationException.class, "temporal:\n  namespace:\n", "temporal.namespace");
    refused(ConfigurationValidationException.class, "orders:\n  unknownFirstQuery:\n", "orders.unknownFirstQuery");
    refused(ConfigurationValidationException.class, "seed:\n  sku: ''\n", "seed.sku");
  }

  @Test
  void countsAndPortsOutOfRangeAreRefusedNamingTheSetting() {
    refused(ConfigurationValidationException.class, "database:\n  maxPoolSize: 0\n", "database.maxPoolSize");
    refused(ConfigurationValidationException.class, "consumer:\n  port: 70000\n", "consumer.port");
    refused(ConfigurationValidationException.class, "maxCreatesInFlight: -1\n", "maxCreatesInFlight");
  }

  @Test
  void severalBadValuesAreReportedTogether() {
    refused(ConfigurationValidationException.class, "maxBodySize: 0B\norders:\n  reservationTtl: 0s\n",
        "maxBodySize", "orders.reservationTtl");
  }

  @Test
  void theConnectionTimeoutStaysBelowTheDatabaseActivityTimeout() throws Exception {
    String message = refused(ConfigurationValidationException.class, "database:\n  connectionTimeout: 15s\n",
        "database.connectionTimeout");
    assertTrue(message.contains("less than"), message);
    load("database:\n  connectionTimeout: 14999ms\n");
    // the annotation's bound is the workflow's activity timeout
    MaxDuration max = FlashsaleConfiguration.DatabaseSettings.class.getField("connectionTimeout")
        .getAnnotation(MaxDuration.class);
    assertEquals(OrderActivities.DB_ACTIVITY_TIMEOUT, java.time.Duration.of(max.value(), max.unit().toChronoUnit()));
    assertTrue(!max.inclusive(), "strictly below");
  }

  @Test
  void aViewsBoundMustExceedItsRefresh() {
    refused(ConfigurationValidationException.class, "stockView:\n  refreshInterval: 2s\n  bound: 2s\n",
        "stockView.bound must exceed stockView.refreshInterval");
    refused(ConfigurationValidationException.class, "principalView:\n  refreshInterval: 3s\n",
        "principalView.bound must exceed principalView.refreshInterval");
  }

  @Test
  void theReconcileScheduleIsOffOrAtLeastASecond() throws Exception {
    assertEquals(null, load("embedded: true\n").reconciliation.interval(), "off unless configured");
    assertEquals(java.time.Duration.ofMinutes(5), load("reconciliation:\n  scheduleEvery: 5m\n").reconciliation.interval());
    assertEquals(null, load("reconciliation:\n  scheduleEvery: 0s\n").reconciliation.interval());
    refused(ConfigurationValidationException.class, "reconciliation:\n  scheduleEvery: 500ms\n",
        "reconciliation.scheduleEvery must be 0 (off) or at least 1 second");
    refused(ConfigurationParsingException.class, "reconciliation:\n  scheduleEvery: 5\n", "reconciliation.scheduleEvery");
  }

  @Test
  void thePendingAgeBoundIsAnHourUnlessSetAndAtLeastAMinute() throws Exception {
    assertEquals(java.time.Duration.ofHours(1),
        load("embedded: true\n").reconciliation.pendingAgeBound.toJavaDuration(), "an hour unless configured");
    assertEquals(java.time.Duration.ofMinutes(10),
        load("reconciliation:\n  pendingAgeBound: 10m\n").reconciliation.pendingAgeBound.toJavaDuration());
    refused(ConfigurationValidationException.class, "reconciliation:\n  pendingAgeBound: 30s\n",
        "reconciliation.pendingAgeBound must be greater than or equal to 1 MINUTES");
  }

  @Test
  void aRenamedKeyIsRefusedPointingAtItsNewName() {
    String message = refused(ConfigurationParsingException.class, "orders:\n  reservationTtlMs: 60000\n",
        "orders.reservationTtlMs");
    assertTrue(message.contains("reservationTtl"), message);
  }
}
