package io.flashsale.launcher;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.dropwizard.core.Configuration;
import io.dropwizard.util.DataSize;
import io.dropwizard.util.DataSizeUnit;
import io.dropwizard.util.Duration;
import io.dropwizard.validation.MaxDuration;
import io.dropwizard.validation.MinDataSize;
import io.dropwizard.validation.MinDuration;
import io.dropwizard.validation.PortRange;
import io.dropwizard.validation.ValidationMethod;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import java.util.concurrent.TimeUnit;

/**
 * Everything configurable: fields, their defaults and their validation, nothing that builds a
 * piece of the service ({@link Assembly} does). The defaults are the embedded mode
 * (docs/DESIGN.md §Engines and configuration). Durations and sizes carry their unit in the YAML
 * ({@code reservationTtl: 1m}, {@code maxBodySize: 16KiB}); a value out of range fails the start
 * with a message naming the setting.
 */
public class FlashsaleConfiguration extends Configuration {

  /**
   * The local default: PostgreSQL (embedded binaries) and the channel stub start with the service,
   * and Temporal per {@code temporal.engine}. False (the default, so a production file that
   * forgets it gets the production checks): every piece is external. embedded.yml sets it.
   */
  @JsonProperty public boolean embedded = false;
  /**
   * Where the local default keeps its state across restarts: PostgreSQL's data directory, the
   * dev server's database and the channel stub's ledger. Relative paths are against the
   * working directory (the launcher runs from the project). Ignored when not embedded.
   */
  @JsonProperty public String dataDir = "data";

  @Valid @NotNull @JsonProperty public DatabaseSettings database = new DatabaseSettings();
  @Valid @NotNull @JsonProperty public TemporalSettings temporal = new TemporalSettings();
  @Valid @NotNull @JsonProperty public ChannelSettings channel = new ChannelSettings();
  @Valid @NotNull @JsonProperty public AuthSettings auth = new AuthSettings();
  @Valid @NotNull @JsonProperty public OrderTimings orders = new OrderTimings();
  @Valid @NotNull @JsonProperty public SeedSettings seed = new SeedSettings();
  @Valid @NotNull @JsonProperty public StockViewSettings stockView = new StockViewSettings();
  @Valid @NotNull @JsonProperty public PrincipalViewSettings principalView = new PrincipalViewSettings();
  @Valid @NotNull @JsonProperty public TracingSettings tracing = new TracingSettings();
  /** Creates in flight at once, at most; past the bound POST /orders answers 503 OVERLOADED at once, with Retry-After. */
  @Min(1) @JsonProperty public int maxCreatesInFlight = 256;
  /**
   * The admission bound is the engine's measured completion rate x this budget (Little's law: an
   * admitted create then waits about the budget), within [minCreatesInFlight, maxCreatesInFlight];
   * 0s: maxCreatesInFlight alone (docs/DESIGN.md §Overload).
   */
  @NotNull @JsonProperty public Duration createLatencyBudget = Duration.seconds(1);
  /**
   * The bound's floor while the service is not overloaded: a quiet or cold service admits a burst
   * of this many. Once it refuses a create at the bound, or answers a quarter of this many past
   * their deadline within 2 s, the measured rate rules, down to a quarter of it (at least 4)
   * (docs/DESIGN.md §Overload, "The floor, quiet and under load").
   */
  @Min(1) @JsonProperty public int minCreatesInFlight = 64;
  /**
   * One principal's share of the creates in flight; past it 429 with Retry-After (one token cannot
   * take every place while others wait). A buyer's retries of one key meet in one workflow, so a
   * real client needs one or two.
   */
  @Min(1) @JsonProperty public int maxCreatesInFlightPerPrincipal = 8;
  /** CSV exports streaming at once (each holds a database connection); past it 503. */
  @Min(1) @JsonProperty public int maxExports = 4;
  /** One principal's share of them; past it 429 with Retry-After (one token cannot take them all). */
  @Min(1) @JsonProperty public int maxExportsPerPrincipal = 2;
  /** Request bodies larger than this are refused with 413 BODY_TOO_LARGE before they are read. */
  @NotNull @MinDataSize(value = 1, unit = DataSizeUnit.BYTES) @JsonProperty
  public DataSize maxBodySize = DataSize.kibibytes(16);
  /**
   * A request body is read in full, without a thread, before the application sees the request;
   * one that has not arrived this long after the request started is refused with 408
   * (docs/DESIGN.md §Slow clients).
   */
  @NotNull @MinDuration(value = 100, unit = TimeUnit.MILLISECONDS) @JsonProperty
  public Duration bodyReadDeadline = Duration.seconds(10);
  /** Open order event streams (SSE) at once; past it 503. */
  @Min(1) @JsonProperty public int maxEventStreams = 100;
  /** One principal's share of them; past it 429 with Retry-After (one token cannot take them all). */
  @Min(1) @JsonProperty public int maxEventStreamsPerPrincipal = 8;
  /** An event stream ends after this long; the client resumes with Last-Event-ID. */
  @NotNull @MinDuration(value = 1, unit = TimeUnit.SECONDS) @JsonProperty
  public Duration maxEventStreamDuration = Duration.minutes(10);
  /** Keep-alive comment interval; a client that went away is noticed at the next write. */
  @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
  public Duration eventStreamHeartbeat = Duration.seconds(15);
  @Valid @NotNull @JsonProperty public RateLimitSettings rateLimits = new RateLimitSettings();
  @Valid @NotNull @JsonProperty public WarmUpSettings warmUp = new WarmUpSettings();
  @Valid @NotNull @JsonProperty public RelaySettings relay = new RelaySettings();
  @Valid @NotNull @JsonProperty public ConsumerSettings consumer = new ConsumerSettings();
  @Valid @NotNull @JsonProperty public ReconciliationSettings reconciliation = new ReconciliationSettings();
  /** Run a Temporal worker in this process ... */
  @JsonProperty public boolean worker = true;
  /** ... hosting the order workflows ... */
  @JsonProperty public boolean workerWorkflows = true;
  /** ... and the activities (database and channel calls). */
  @JsonProperty public boolean workerActivities = true;

  @JsonIgnore
  @ValidationMethod(message = "stockView.bound must exceed stockView.refreshInterval")
  public boolean isStockViewBoundAboveRefresh() {
    return stockView == null || stockView.boundAboveRefresh();
  }

  @JsonIgnore
  @ValidationMethod(message = "tracing.exporter otlp needs tracing.otlpEndpoint (e.g. http://collector:4318/v1/traces)")
  public boolean isTracingEndpointSet() {
    return tracing == null || tracing.exporter != TracingSettings.Exporter.OTLP
        || (tracing.otlpEndpoint != null && !tracing.otlpEndpoint.isBlank());
  }

  @JsonIgnore
  @ValidationMethod(message = "principalView.bound must exceed principalView.refreshInterval")
  public boolean isPrincipalViewBoundAboveRefresh() {
    return principalView == null || principalView.boundAboveRefresh();
  }

  public static class DatabaseSettings {
    /** External PostgreSQL; ignored when embedded. */
    @JsonProperty public String url;
    @NotNull @JsonProperty public String user = "postgres";
    @NotNull @JsonProperty public String password = "";
    @Min(1) @JsonProperty public int maxPoolSize = 16;
    /**
     * How long a caller waits for a pooled connection; must stay below the 15 s database activity
     * timeout ({@code OrderActivities.DB_ACTIVITY_TIMEOUT}), so a wait ends in a quick failure
     * and a backed-off retry, not a timed-out attempt.
     */
    @NotNull @MinDuration(value = 250, unit = TimeUnit.MILLISECONDS)
    @MaxDuration(value = 15, unit = TimeUnit.SECONDS, inclusive = false) @JsonProperty
    public Duration connectionTimeout = Duration.seconds(5);
    /**
     * Admission transactions on one SKU at once in one worker (0: no limit). Each holds the SKU's
     * row lock until commit; PostgreSQL runs one hot row fastest at about four at a time.
     */
    @Min(0) @JsonProperty public int hotRowConcurrency = 4;
    /**
     * Embedded PostgreSQL: port (0 = a free one reserved across the processes of this machine that
     * start local stacks) and data directory (empty = &lt;dataDir&gt;/postgres).
     */
    @PortRange @JsonProperty public int embeddedPort = 0;
    @NotNull @JsonProperty public String embeddedDataDir = "";
    /**
     * Embedded PostgreSQL: fsync and full_page_writes on, so a host crash (power, kernel) keeps
     * every acknowledged order. False: off, for scratch stacks (tests, bench, demo), which say so at
     * start; synchronous_commit stays on either way, so a crash of PostgreSQL alone loses nothing.
     */
    @JsonProperty public boolean embeddedDurable = true;
    /**
     * Embedded PostgreSQL: a postmaster that dies while the service runs (an OOM kill) is started
     * again on the same data directory and port. False: it stays down (experiments that restart it
     * themselves, as an operator would).
     */
    @JsonProperty public boolean superviseEmbedded = true;

  }

  public static class TemporalSettings {
    /**
     * auto: the Temporal CLI dev server when a {@code temporal} binary is found, else the in-memory
     * engine; dev-server / embedded: that one or fail; external: connect to {@code target}. Only
     * auto and external make sense when {@code embedded} is false (auto then means external).
     */
    @NotNull @JsonProperty public TemporalEngine engine = TemporalEngine.AUTO;
    /** The frontend to connect to (external engine). */
    @NotEmpty @JsonProperty public String target = "127.0.0.1:7233";
    @NotEmpty @JsonProperty public String namespace = "default";
    /** Port the local engine (dev server or in-memory) listens on, on 127.0.0.1. */
    @PortRange @JsonProperty public int embeddedPort = 7233;
    /** The dev server's Web UI port (127.0.0.1); 0 = no UI. */
    @PortRange @JsonProperty public int uiPort = 8233;
    /** The dev server's SQLite file; empty = &lt;dataDir&gt;/temporal.db; "memory" = not kept. */
    @NotNull @JsonProperty public String devServerDbFile = "";
    /** The temporal CLI binary; empty = PATH, then the project's .tools/bin. */
    @NotNull @JsonProperty public String cliPath = "";
    /** External engine: TLS (Temporal Cloud needs it; mTLS with a client certificate and key). */
    @Valid @NotNull @JsonProperty public TlsSettings tls = new TlsSettings();
    /** External engine: an API key sent as a bearer token (Temporal Cloud API keys); empty = none. */
    @NotNull @JsonProperty public String apiKey = "";
    /**
     * How long an HTTP request waits for the engine (create, pay, cancel); past it 503 with
     * Retry-After, and the same request may be sent again.
     */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration callDeadline = Duration.seconds(10);
    /**
     * A create's own wait for the engine: past it 503 with Retry-After, and the same request key sent
     * again reads the order if the create went through. Short, so that a buyer of a crowd is answered
     * within 2 s whatever the load (docs/DESIGN.md §Overload).
     */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration createDeadline = Duration.milliseconds(1500);
    /** Start a workflow for every non-final order that has none, when the service starts. */
    @JsonProperty public boolean repairOrphansAtStart = true;
    /**
     * Workflows a worker keeps cached (sticky execution); 0 turns caching and the sticky queue off.
     * A sale keeps every order of the last reservation TTL busy (a minute of creates), and a run
     * evicted from the cache replays its history on its next task: sized for that, not the SDK's
     * 600. Null: the SDK default.
     */
    @Min(0) @JsonProperty public Integer workflowCacheSize = 2_000;
    /** Activities one worker runs at once; 0 = twice database.maxPoolSize. */
    @Min(0) @JsonProperty public int activitySlots = 0;
    /**
     * Concurrent pollers for activity tasks (the charge, query, close and refund calls). With 16
     * workflow pollers and 2 of these, B2's activity tasks (its charges among them) waited 1.9 s on
     * average for a poller.
     */
    @Min(1) @JsonProperty public int activityPollers = 8;
    /**
     * Concurrent pollers for workflow tasks; the SDK splits them between the sticky queue and the
     * task queue, where every create's first task waits. With 2 a create's first task waited
     * 96 ms on average for a poller at 40 creates/s, with 16 25 ms (docs/DESIGN.md §Performance,
     * worker sizing).
     */
    @Min(1) @JsonProperty public int workflowPollers = 16;
    /** Payloads sealed before they reach the engine (docs/DESIGN.md §Payload encryption). */
    @Valid @NotNull @JsonProperty public PayloadEncryptionSettings payloadEncryption = new PayloadEncryptionSettings();
  }

  /**
   * Every payload the client and the worker hand to the engine is sealed with AES-256-GCM under
   * the active key; every listed key opens what it sealed (rotation: a new active key, the old one
   * still listed). Off in the local default unless turned on; production.example.yml has it on.
   */
  public static class PayloadEncryptionSettings {
    @JsonProperty public boolean enabled = false;
    /** The key that seals new payloads; one of {@code keys}. */
    @NotNull @JsonProperty public String activeKeyId = "";
    /** Key id → 64 hex digits (32 bytes, {@code openssl rand -hex 32}), each from its own environment variable. */
    @NotNull @JsonProperty public java.util.Map<String, String> keys = new java.util.LinkedHashMap<>();
    /** Serve the codec endpoint (/codec/encode, /codec/decode) on the admin port, behind its credential. */
    @JsonProperty public boolean codecEndpoint = true;
    /**
     * Browser origins (the Web UI's) that may call the codec endpoint; the local dev server's UI is
     * added by itself.
     */
    @NotNull @JsonProperty public java.util.List<String> codecCorsOrigins = new java.util.ArrayList<>();
    /** The local dev server's Web UI is started pointed at this service's codec endpoint. */
    @JsonProperty public boolean devServerUiCodec = true;
  }

  public static class TlsSettings {
    @JsonProperty public boolean enabled = false;
    /** PEM CA bundle for the server certificate; empty = the JVM's trust store. */
    @NotNull @JsonProperty public String caCertFile = "";
    /** PEM client certificate and PKCS#8 key for mTLS; both empty = server-side TLS only. */
    @NotNull @JsonProperty public String clientCertFile = "";
    @NotNull @JsonProperty public String clientKeyFile = "";
    /** Overrides the name checked against the server certificate (SNI / authority). */
    @NotNull @JsonProperty public String serverName = "";
    /**
     * A folder of the deployment's certificates (docker/temporal/make-certs.sh, made by
     * ./flashsale cluster in its data folder): TLS on, and what is not set above taken from it
     * (ca.pem, service.pem, service.key, the server name "temporal"). Empty: nothing.
     */
    @NotNull @JsonProperty public String certificateDir = "";

    /** These settings with {@link #certificateDir} applied. */
    public TlsSettings effective() {
      if (certificateDir.isBlank()) return this;
      java.nio.file.Path dir = java.nio.file.Path.of(certificateDir);
      TlsSettings t = new TlsSettings();
      t.enabled = true;
      t.caCertFile = caCertFile.isBlank() ? dir.resolve("ca.pem").toString() : caCertFile;
      t.clientCertFile = clientCertFile.isBlank() ? dir.resolve("service.pem").toString() : clientCertFile;
      t.clientKeyFile = clientKeyFile.isBlank() ? dir.resolve("service.key").toString() : clientKeyFile;
      t.serverName = serverName.isBlank() ? "temporal" : serverName;
      return t;
    }
  }

  public static class ChannelSettings {
    /** External channel; ignored when embedded. https outside the local default (SecretsCheck). */
    @JsonProperty public String baseUrl;
    /**
     * Acknowledges a channel reached over plain http outside the local default (a lab channel, the
     * compose demo's stub): its merchant key and its answers travel in clear.
     */
    @JsonProperty public boolean plainHttpOutsideLocalDefault = false;
    @NotEmpty @JsonProperty public String host = "127.0.0.1";
    @PortRange @JsonProperty public int embeddedPort = 8090;
    /** The charge / query / close HTTP timeout. */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration timeout = Duration.milliseconds(300);
    /** Where the channel posts callbacks; empty = this API's /callbacks/payment. */
    @JsonProperty public String notifyUrl = "";
    /**
     * The key of the callbacks' X-Channel-Signature. Every callback must carry a valid one: with
     * no secret every callback is refused (the local default makes one per start).
     */
    @JsonProperty public String callbackSecret = "";
    /**
     * A second accepted key while the channel's secret is rotated: set it to the old secret, give
     * the channel the new one, and clear it once the channel signs with the new one only.
     */
    @JsonProperty public String previousCallbackSecret = "";
    /**
     * The merchant's credential for the channel's API (charge, query, close, refund, statement),
     * sent as a bearer token; not the callback secret. The local default makes a random one per
     * start and gives it to its stub; anywhere else it is required.
     */
    @JsonProperty public String merchantKey = "";
  }

  public static class AuthSettings {
    /**
     * POST /session hands out tokens for any tenant/subject: for laptops and tests only. Unset: on
     * in the local default (embedded), off everywhere else.
     */
    @JsonProperty public Boolean devLogin;

    public boolean devLoginEnabled(boolean embedded) {
      return devLogin == null ? embedded : devLogin;
    }
    /**
     * The second, explicitly named setting that dev login needs outside the local default: without
     * it a service with {@code devLogin: true} and {@code embedded: false} refuses to start.
     */
    @JsonProperty public boolean devLoginOutsideLocalDefault = false;
    /**
     * The admin port's credential ({@code Authorization: Bearer <adminToken>} on everything but
     * GET /ping and /healthcheck); required outside the local default. Empty in the local default:
     * the port answers only a loopback Host there.
     */
    @JsonProperty public String adminToken = "";
    /** The local default's operator key when no admin token is set (made at start, never configured). */
    @JsonIgnore public String localOperatorKey;

    /**
     * What an operator's {@code paymentNotification} signal is proved with (docs/DESIGN.md §Trust
     * boundaries): the admin credential, or the local default's key made at start; null: none.
     */
    @JsonIgnore
    public String operatorKey() {
      return adminToken != null && !adminToken.isBlank() ? adminToken : localOperatorKey;
    }
    /** HMAC key for session tokens (the key id "default"); empty with no keys = a random key per start. */
    @JsonProperty public String secret = "";
    /**
     * More token keys, id → secret, for rotation: a token is verified with the key its id names,
     * so tokens signed with a retiring key stay valid while that key is listed.
     */
    @NotNull @JsonProperty public java.util.Map<String, String> keys = new java.util.LinkedHashMap<>();
    /** The key that signs new tokens; required when more than one key is configured. */
    @NotNull @JsonProperty public String signingKeyId = "";
    /** How long a session token lives (whole seconds). */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.SECONDS) @JsonProperty
    public Duration tokenTtl = Duration.hours(1);
    /**
     * The session cookie's Secure flag. Unset: when the request came over TLS (an HTTPS connector,
     * or X-Forwarded-Proto on a connector with useForwardedHeaders); true: always, e.g. behind a TLS proxy; false: never.
     */
    @JsonProperty public Boolean secureCookie;
  }

  /**
   * Order timings; they travel in each run's start arguments ({@code OrderSettings}). The same
   * reservation TTL sets {@code reservation.expires_at}, so API and worker processes must agree.
   */
  public static class OrderTimings {
    /** How long a created order holds its stock unpaid before it expires. */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.SECONDS) @JsonProperty
    public Duration reservationTtl = Duration.minutes(1);
    /** An UNKNOWN charge is first queried after this long, then at doubling intervals ... */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration unknownFirstQuery = Duration.seconds(1);
    /** ... up to this interval. */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration unknownQueryCap = Duration.minutes(1);
    /** How long a final order still applies a late channel notice (a charge after expiry is refunded). */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration lateNoticeWindow = Duration.minutes(10);
    /** A long-lived order (e.g. a callback storm) continues as new past this many history events (0: 4000). */
    @Min(0) @JsonProperty public int continueAsNewAfterEvents = 4_000;
    /**
     * New orders run their database steps as local activities in the workflow's worker (fewer
     * round trips through the engine). False when the database steps must run in separate
     * activity workers.
     */
    @JsonProperty public boolean localDatabaseSteps = true;
    /**
     * The task queue of the channel's activities, polled by workers of its own in every process
     * that runs activities, so a backlog of database steps never delays a charge past its start
     * bound. Empty: the orders' queue (deploy workers that poll the channel's queue first).
     */
    @NotNull @JsonProperty public String channelTaskQueue = io.flashsale.workflows.WorkflowIds.CHANNEL_TASK_QUEUE;
    /**
     * An UNKNOWN or REFUNDING order whose first round at the channel got no definite answer for
     * this long raises OrderAttention (UNKNOWN_AGED, REFUND_AGED) and goes on in longer rounds.
     */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.SECONDS) @JsonProperty
    public Duration attentionAfter = Duration.minutes(30);
  }

  /**
   * Per-principal request rates (docs/DESIGN.md §Overload), token buckets on every authenticated
   * request: writes (create, pay, cancel, logout) and reads; past them 429 RATE_LIMITED with
   * Retry-After while every other principal is served. A person clicking never meets them.
   */
  /** The API's hot path run before the instance is up (WarmUp; docs/DESIGN.md §Warm from the first buyer). */
  public static class WarmUpSettings {
    /** How long; 0s: none (the instance serves its first buyers cold). */
    @NotNull @MaxDuration(value = 5, unit = TimeUnit.MINUTES) @JsonProperty
    public Duration duration = Duration.seconds(0);
  }

  public static class RateLimitSettings {
    @JsonProperty public boolean enabled = true;
    @DecimalMin(value = "0.001") @JsonProperty public double writesPerSecond = 5;
    @Min(1) @JsonProperty public int writeBurst = 20;
    @DecimalMin(value = "0.001") @JsonProperty public double readsPerSecond = 20;
    @Min(1) @JsonProperty public int readBurst = 60;
  }

  public static class RelaySettings {
    @JsonProperty public boolean enabled = true;
    @Min(1) @JsonProperty public int batchSize = 20;
    /** How long the relay waits after a round that found less than a batch. */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration pollInterval = Duration.milliseconds(200);
    /**
     * How long one delivery waits for the consumer's answer; past it the event stays unpublished
     * and goes again in a later round (the consumer drops the duplicate).
     */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration deliveryTimeout = Duration.seconds(5);
    /** Where events go; empty = the embedded consumer. */
    @JsonProperty public String consumerUrl = "";
  }

  /** Reconciliation with orphan repair on a Temporal Schedule (docs/DESIGN.md §Reconciliation on a schedule). */
  public static class ReconciliationSettings {
    /**
     * Interval of the schedule {@code flashsale-reconcile} (overlap SKIP); a worker instance creates
     * it at start or brings it to this interval. 0 = this instance leaves the engine's schedule as
     * it is (none is created; an existing one is paused or deleted with the temporal CLI).
     */
    @NotNull @JsonProperty public Duration scheduleEvery = Duration.seconds(0);
    /**
     * How long an order may stay PAYING, UNKNOWN or REFUNDING (since its last transition) before a
     * report flags it PENDING_AGED rather than counting it as pending (docs/DESIGN.md
     * §Reconciliation). At least a minute: a payment in flight takes seconds, not minutes.
     */
    @NotNull @MinDuration(value = 1, unit = TimeUnit.MINUTES) @JsonProperty
    public Duration pendingAgeBound = Duration.hours(1);

    @JsonIgnore
    @ValidationMethod(message = "reconciliation.scheduleEvery must be 0 (off) or at least 1 second")
    public boolean isScheduleEveryValid() {
      return scheduleEvery == null || scheduleEvery.toNanoseconds() == 0 || scheduleEvery.toSeconds() >= 1;
    }

    /** The interval, or null when off. */
    @JsonIgnore
    public java.time.Duration interval() {
      return scheduleEvery.toNanoseconds() == 0 ? null : scheduleEvery.toJavaDuration();
    }
  }

  public static class ConsumerSettings {
    /** Run the fulfillment consumer (own port, own schema and pool) in this process. */
    @JsonProperty public boolean enabled = true;
    @NotEmpty @JsonProperty public String host = "127.0.0.1";
    @PortRange @JsonProperty public int port = 8092;
    /**
     * The secret every relay signs each delivery with (the relays of this process and {@code
     * ./flashsale relay}, which reads it from FLASHSALE_DELIVERY_SECRET); the consumer refuses any
     * delivery it did not sign. Required outside the local default, which makes a random one per start.
     */
    @JsonProperty public String deliverySecret = "";
  }

  /**
   * An in-memory view's switch and timing (docs/DESIGN.md §Engines and configuration): it reads
   * every row again every {@code refreshInterval} and answers only from state learned within
   * {@code bound}, else the check it answers reads the database.
   */
  public abstract static class ViewSettings {
    /** False: the view is not kept and every check it answers reads the database. */
    @JsonProperty public boolean enabled = true;
    /** How often the view reads the database again: the longest a change it was not told of goes unseen. */
    @NotNull @MinDuration(value = 10, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration refreshInterval;
    /** The oldest state the view answers from; must exceed refreshInterval. */
    @NotNull @MinDuration(value = 11, unit = TimeUnit.MILLISECONDS) @JsonProperty
    public Duration bound = Duration.seconds(2);

    ViewSettings(Duration refreshInterval) {
      this.refreshInterval = refreshInterval;
    }

    boolean boundAboveRefresh() {
      return bound == null || refreshInterval == null
          || bound.toJavaDuration().compareTo(refreshInterval.toJavaDuration()) > 0;
    }
  }

  /**
   * The API's in-memory sold-out view (docs/DESIGN.md §Workflow design, API gates): a sold-out SKU
   * is refused without a stock read. It learns sold-out flips by LISTEN/NOTIFY and reads every SKU
   * again every {@code refreshInterval}.
   */
  public static class StockViewSettings extends ViewSettings {
    public StockViewSettings() {
      super(Duration.seconds(1));
    }
  }

  /** The caller view: revocations and new buyers polled every refreshInterval. */
  public static class PrincipalViewSettings extends ViewSettings {
    public PrincipalViewSettings() {
      super(Duration.milliseconds(200));
    }
  }

  public static class SeedSettings {
    @JsonProperty public boolean enabled = true;
    @NotEmpty @JsonProperty public String tenant = "t1";
    @NotEmpty @JsonProperty public String sku = "sku-lab-01";
    @Min(0) @JsonProperty public int total = 20;
    @Min(0) @JsonProperty public long unitPrice = 1990;
    @Min(1) @JsonProperty public int perUserLimit = 3;
  }

  /**
   * Tracing (docs/DESIGN.md §Tracing). Every process traces and puts trace ids in its log lines;
   * the exporter says where the finished spans go: none (ids in the logs only), log (one line per
   * span on the logger io.flashsale.tracing: the local default) or otlp (OTLP/HTTP to
   * otlpEndpoint, batched).
   */
  public static class TracingSettings {
    public enum Exporter {
      NONE, LOG, OTLP;

      @com.fasterxml.jackson.annotation.JsonCreator
      public static Exporter parse(String text) {
        return valueOf(text.trim().toUpperCase(java.util.Locale.ROOT));
      }
    }

    @NotNull @JsonProperty public Exporter exporter = Exporter.NONE;
    /** The collector's OTLP/HTTP traces URL, e.g. http://collector:4318/v1/traces; needed for otlp. */
    @JsonProperty public String otlpEndpoint = "";
    /**
     * The service name the spans carry, with the process's role appended: -api (a server without a
     * worker), -worker (the worker command); a server that hosts both keeps it as is.
     */
    @NotEmpty @JsonProperty public String serviceName = "flashsale";
  }
}
