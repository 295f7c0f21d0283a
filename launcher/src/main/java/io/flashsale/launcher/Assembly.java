package io.flashsale.launcher;

import io.flashsale.activities.ChannelActivitiesImpl;
import io.flashsale.activities.HotRowGate;
import io.flashsale.activities.OrderActivitiesImpl;
import io.flashsale.activities.Safeguards;
import io.flashsale.api.RestApi;
import io.flashsale.api.auth.TokenService;
import io.flashsale.launcher.observe.SdkMetrics;
import io.flashsale.outbox.OutboxRelay;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.paymentchannel.http.HttpPaymentChannel;
import io.flashsale.paymentchannel.http.SignedJsonCallbacks;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.PrincipalView;
import io.flashsale.persistence.StockView;
import io.flashsale.workflows.OrderActivities;
import io.flashsale.workflows.OrderSettings;
import io.flashsale.workflows.Orders;
import io.flashsale.workflows.codec.PayloadEncryption;
import io.temporal.client.WorkflowClient;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.UnaryOperator;

/**
 * Builds the service's pieces from the configuration: pools, the channel adapter, the Temporal
 * runtime and worker, the relay, the token service, the views and the API's settings. The server
 * and the worker command both build through here; {@link FlashsaleConfiguration} only holds the
 * values.
 */
public final class Assembly {
  private Assembly() {}

  /** The orders pool on {@code url} (the configured one, or the embedded database's). */
  public static Database pool(FlashsaleConfiguration.DatabaseSettings db, String url) {
    return new Database(url, db.user, db.password, db.maxPoolSize, db.connectionTimeout.toJavaDuration());
  }

  /**
   * The channels: the HTTP adapter at {@code baseUrl}, asking for callbacks at {@code notifyUrl},
   * with the stub's signed callbacks, registered as {@value PaymentChannels#DEFAULT}.
   */
  public static PaymentChannels channels(FlashsaleConfiguration.ChannelSettings c, String baseUrl, String notifyUrl) {
    return channels(c, baseUrl, notifyUrl, io.opentelemetry.api.OpenTelemetry.noop());
  }

  /** The same, each channel call a client span of {@code telemetry}'s with its traceparent header. */
  public static PaymentChannels channels(FlashsaleConfiguration.ChannelSettings c, String baseUrl, String notifyUrl,
      io.opentelemetry.api.OpenTelemetry telemetry) {
    return PaymentChannels.single(
        new HttpPaymentChannel(baseUrl, notifyUrl, c.timeout.toJavaDuration(), c.merchantKey, telemetry),
        new SignedJsonCallbacks(Arrays.asList(c.callbackSecret, c.previousCallbackSecret)));
  }

  /** Client and workers for {@code target}; TLS and the API key apply to an external cluster only. */
  public static TemporalRuntime temporal(FlashsaleConfiguration.TemporalSettings t, String target, boolean external,
      SdkMetrics metrics) {
    return temporal(t, target, external, metrics, null);
  }

  /** The same, traced by {@code tracing} (null: untraced). */
  public static TemporalRuntime temporal(FlashsaleConfiguration.TemporalSettings t, String target, boolean external,
      SdkMetrics metrics, io.flashsale.launcher.observe.Tracing tracing) {
    return new TemporalRuntime(target, t.namespace, t.workflowCacheSize, external ? t.tls.effective() : null,
        external ? t.apiKey : "", metrics, tracing, PayloadEncryption.dataConverter(payloadCodec(t.payloadEncryption)));
  }

  /** The payload codec, or null when payload encryption is off; a missing or malformed key fails the start. */
  public static PayloadEncryption payloadCodec(FlashsaleConfiguration.PayloadEncryptionSettings p) {
    if (!p.enabled) return null;
    if (p.keys.isEmpty()) {
      throw new IllegalArgumentException("temporal.payloadEncryption.enabled needs temporal.payloadEncryption.keys"
          + " (id: 64 hex digits, openssl rand -hex 32) and activeKeyId");
    }
    try {
      return PayloadEncryption.fromHex(p.keys, p.activeKeyId);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("temporal.payloadEncryption: " + e.getMessage(), e);
    }
  }

  /**
   * The worker's activities on this pool and these channels (each order's own), registered on the
   * runtime; the server and the worker command both register through here.
   */
  public static void registerWorker(FlashsaleConfiguration cfg, TemporalRuntime runtime, Database db,
      PaymentChannels channels, Safeguards safeguards) {
    registerWorker(cfg, runtime, db, channels, safeguards, UnaryOperator.identity());
  }

  /**
   * The same, the order activities passed through {@code wrap} first: identity in the service; an
   * experiment's own entry point (test classpath) wraps them to die at a chosen step.
   */
  public static void registerWorker(FlashsaleConfiguration cfg, TemporalRuntime runtime, Database db,
      PaymentChannels channels, Safeguards safeguards, UnaryOperator<OrderActivities> wrap) {
    HotRowGate hotRow = new HotRowGate(cfg.database.hotRowConcurrency, cfg.database.connectionTimeout.toJavaDuration());
    runtime.registerWorker(
        wrap.apply(new OrderActivitiesImpl(db, cfg.orders.reservationTtl.toJavaDuration(), safeguards, hotRow,
            cfg.auth.operatorKey())),
        new ChannelActivitiesImpl(channels, new OrderQueries(db)::channelOf, safeguards), cfg.workerWorkflows,
        cfg.workerActivities,
        TemporalRuntime.workerOptions(cfg.database.maxPoolSize, cfg.temporal),
        cfg.orders.channelTaskQueue.isBlank() ? null : cfg.orders.channelTaskQueue);
  }

  /** The timings each order run starts with. */
  public static OrderSettings orderSettings(FlashsaleConfiguration.OrderTimings o) {
    return new OrderSettings(o.reservationTtl.toMilliseconds(), o.unknownFirstQuery.toMilliseconds(),
        o.unknownQueryCap.toMilliseconds(), o.lateNoticeWindow.toMilliseconds(), o.continueAsNewAfterEvents,
        o.localDatabaseSteps, o.channelTaskQueue.isBlank() ? null : o.channelTaskQueue,
        o.attentionAfter.toMilliseconds());
  }

  /** The API's order commands on the engine: a create waits at most {@code temporal.createDeadline}, the others {@code callDeadline}. */
  public static Orders orders(FlashsaleConfiguration cfg, WorkflowClient client) {
    return new Orders(client, orderSettings(cfg.orders), cfg.temporal.callDeadline.toJavaDuration(),
        cfg.temporal.createDeadline.toJavaDuration(), io.flashsale.workflows.WorkflowIds.TASK_QUEUE);
  }

  /** The outbox relay delivering to {@code consumerUrl}, each delivery signed with {@code deliverySecret}. */
  public static OutboxRelay relay(FlashsaleConfiguration.RelaySettings r, Database db, String consumerUrl,
      String deliverySecret) {
    return new OutboxRelay(db, consumerUrl, deliverySecret, r.batchSize, r.pollInterval.toMilliseconds(), "embedded",
        r.deliveryTimeout.toJavaDuration());
  }

  /** Session tokens signed with the configured keys, living {@code auth.tokenTtl}. */
  public static TokenService tokens(FlashsaleConfiguration.AuthSettings a) {
    return new TokenService(TokenService.keys(a.secret, a.keys), a.signingKeyId, a.tokenTtl.toSeconds(),
        Clock.systemUTC());
  }

  /** The sold-out view on the pool's database (not started), or null when off. */
  public static StockView stockView(FlashsaleConfiguration.StockViewSettings s, Database db) {
    if (!s.enabled) return null;
    return StockView.on(db, s.refreshInterval.toJavaDuration(), s.bound.toJavaDuration());
  }

  /**
   * The caller view on the pool's database (not started), or null when off. {@code tokenLifetime}:
   * how long a token lives at most; a logout older than that (and the clocks' allowance twice)
   * refuses only expired tokens, so the view stops polling it. Zero: logouts are never forgotten.
   */
  public static PrincipalView principalView(FlashsaleConfiguration.PrincipalViewSettings s, Database db,
      Duration tokenLifetime) {
    if (!s.enabled) return null;
    Duration forget = tokenLifetime.isZero() ? Duration.ZERO
        : tokenLifetime.plusMillis(2 * TokenService.CLOCK_SKEW_MILLIS);
    return PrincipalView.on(db, s.refreshInterval.toJavaDuration(), s.bound.toJavaDuration(), forget);
  }

  /** The API's limits and switches. */
  public static RestApi.Settings apiSettings(FlashsaleConfiguration cfg) {
    return new RestApi.Settings(cfg.maxBodySize.toBytes(), cfg.maxCreatesInFlight, cfg.minCreatesInFlight,
        cfg.createLatencyBudget.toMilliseconds(), cfg.maxCreatesInFlightPerPrincipal, cfg.maxExports,
        cfg.maxExportsPerPrincipal, cfg.maxEventStreams, cfg.maxEventStreamsPerPrincipal,
        cfg.maxEventStreamDuration.toMilliseconds(), cfg.eventStreamHeartbeat.toMilliseconds(),
        cfg.auth.devLoginEnabled(cfg.embedded), cfg.auth.secureCookie, cfg.embedded, cfg.auth.adminToken,
        cfg.rateLimits.enabled ? new RestApi.Rates(cfg.rateLimits.writesPerSecond, cfg.rateLimits.writeBurst,
            cfg.rateLimits.readsPerSecond, cfg.rateLimits.readBurst) : null);
  }
}
