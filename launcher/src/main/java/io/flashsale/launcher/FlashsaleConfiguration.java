package io.flashsale.launcher;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.dropwizard.core.Configuration;
import io.flashsale.activities.ChannelActivitiesImpl;
import io.flashsale.activities.HotRowGate;
import io.flashsale.activities.OrderActivitiesImpl;
import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.observe.SdkMetrics;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.paymentchannel.http.HttpPaymentChannel;
import io.flashsale.paymentchannel.http.SignedJsonCallbacks;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.Database;
import io.flashsale.workflows.OrderSettings;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;

/**
 * Everything configurable; the defaults are the embedded mode (docs/DESIGN.md §Engines and
 * configuration).
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
  /** Creates in flight at once, at most; past the bound POST /orders answers 503 OVERLOADED at once, with Retry-After. */
  @Min(1) @JsonProperty public int maxCreatesInFlight = 256;
  /**
   * The admission bound is the engine's measured completion rate x this budget (Little's law: an
   * admitted create then waits about the budget), within [minCreatesInFlight, maxCreatesInFlight];
   * 0: maxCreatesInFlight alone (docs/DESIGN.md §Overload).
   */
  @Min(0) @JsonProperty public long createLatencyBudgetMs = 1_000;
  /** The bound's floor: a quiet or cold service admits a burst of this many (the bench's 64 clients). */
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
  @Min(1) @JsonProperty public long maxBodyBytes = 16 * 1024;
  /** Open order event streams (SSE) at once; past it 503. */
  @Min(1) @JsonProperty public int maxEventStreams = 100;
  /** One principal's share of them; past it 429 with Retry-After (one token cannot take them all). */
  @Min(1) @JsonProperty public int maxEventStreamsPerPrincipal = 8;
  /** An event stream ends after this long; the client resumes with Last-Event-ID. */
  @JsonProperty public long maxEventStreamMs = 600_000;
  /** Keep-alive comment interval; a client that went away is noticed at the next write. */
  @JsonProperty public long eventStreamHeartbeatMs = 15_000;
  @Valid @NotNull @JsonProperty public RelaySettings relay = new RelaySettings();
  @Valid @NotNull @JsonProperty public ConsumerSettings consumer = new ConsumerSettings();
  /** Run a Temporal worker in this process ... */
  @JsonProperty public boolean worker = true;
  /** ... hosting the order workflows ... */
  @JsonProperty public boolean workerWorkflows = true;
  /** ... and the activities (database and channel calls). */
  @JsonProperty public boolean workerActivities = true;

  /**
   * The worker's activities on this configuration's pool and channel, registered on the runtime;
   * the server and the worker command both register through here.
   */
  public void registerWorker(TemporalRuntime runtime, Database db, PaymentChannels channels, Safeguards safeguards) {
    HotRowGate hotRow = new HotRowGate(database.hotRowConcurrency, DatabaseTimeouts.connectionTimeout(database));
    runtime.registerWorker(new OrderActivitiesImpl(db, Duration.ofMillis(orders.reservationTtlMs), safeguards, hotRow),
        new ChannelActivitiesImpl(channels, new OrderQueries(db)::channelOf, safeguards), workerWorkflows, workerActivities,
        TemporalRuntime.workerOptions(database.maxPoolSize, temporal));
  }

  public static class DatabaseSettings {
    /** A pool on {@code url} (the configured one, or the embedded database's). */
    public Database open(String url) {
      return new Database(url, user, password, maxPoolSize, DatabaseTimeouts.connectionTimeout(this));
    }

    /** External PostgreSQL; ignored when embedded. */
    @JsonProperty public String url;
    @JsonProperty public String user = "postgres";
    @JsonProperty public String password = "";
    @Min(1) @JsonProperty public int maxPoolSize = 16;
    /** How long a caller waits for a pooled connection; must stay below the 15 s database activity timeout. */
    @JsonProperty public long connectionTimeoutMs = 5_000;
    /**
     * Admission transactions on one SKU at once in one worker (0: no limit). Each holds the SKU's
     * row lock until commit; PostgreSQL runs one hot row fastest at about four at a time.
     */
    @Min(0) @JsonProperty public int hotRowConcurrency = 4;
    /** Embedded PostgreSQL: port (0 = any free) and data directory (empty = &lt;dataDir&gt;/postgres). */
    @JsonProperty public int embeddedPort = 0;
    @JsonProperty public String embeddedDataDir = "";
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
    /** Client and workers for {@code target}; TLS and the API key apply to an external cluster only. */
    public TemporalRuntime connect(String target, boolean external, SdkMetrics metrics) {
      return new TemporalRuntime(target, namespace, workflowCacheSize, external ? tls : null, external ? apiKey : "",
          metrics);
    }

    /**
     * auto: the Temporal CLI dev server when a {@code temporal} binary is found, else the in-memory
     * engine; dev-server / embedded: that one or fail; external: connect to {@code target}. Only
     * auto and external make sense when {@code embedded} is false (auto then means external).
     */
    @JsonProperty public TemporalEngine engine = TemporalEngine.AUTO;
    /** The frontend to connect to (external engine). */
    @JsonProperty public String target = "127.0.0.1:7233";
    @JsonProperty public String namespace = "default";
    /** Port the local engine (dev server or in-memory) listens on, on 127.0.0.1. */
    @JsonProperty public int embeddedPort = 7233;
    /** The dev server's Web UI port (127.0.0.1); 0 = no UI. */
    @JsonProperty public int uiPort = 8233;
    /** The dev server's SQLite file; empty = &lt;dataDir&gt;/temporal.db; "memory" = not kept. */
    @JsonProperty public String devServerDbFile = "";
    /** The temporal CLI binary; empty = PATH, then the project's .tools/bin. */
    @JsonProperty public String cliPath = "";
    /** External engine: TLS (Temporal Cloud needs it; mTLS with a client certificate and key). */
    @Valid @NotNull @JsonProperty public TlsSettings tls = new TlsSettings();
    /** External engine: an API key sent as a bearer token (Temporal Cloud API keys); empty = none. */
    @JsonProperty public String apiKey = "";
    /**
     * How long an HTTP request waits for the engine (create, pay, cancel); past it 503 with
     * Retry-After, and the same request may be sent again.
     */
    @JsonProperty public long callDeadlineMs = 10_000;
    /** Start a workflow for every non-final order that has none, when the service starts. */
    @JsonProperty public boolean repairOrphansAtStart = true;
    /**
     * Workflows a worker keeps cached (sticky execution); 0 turns caching and the sticky queue off.
     * A sale keeps every order of the last reservation TTL busy (a minute of creates), and a run
     * evicted from the cache replays its history on its next task: sized for that, not the SDK's
     * 600. Null: the SDK default.
     */
    @JsonProperty public Integer workflowCacheSize = 2_000;
    /** Activities one worker runs at once; 0 = twice database.maxPoolSize. */
    @JsonProperty public int activitySlots = 0;
    /**
     * Concurrent pollers for activity tasks (the charge, query, close and refund calls). With 16
     * workflow pollers and 2 of these, B2's activity tasks (its charges among them) waited 1.9 s on
     * average for a poller.
     */
    @JsonProperty public int activityPollers = 8;
    /**
     * Concurrent pollers for workflow tasks; the SDK splits them between the sticky queue and the
     * task queue, where every create's first task waits. With 2 a create's first task waited
     * 96 ms on average for a poller at 40 creates/s, with 16 25 ms (docs/DESIGN.md §Performance,
     * worker sizing).
     */
    @JsonProperty public int workflowPollers = 16;
  }

  public static class TlsSettings {
    @JsonProperty public boolean enabled = false;
    /** PEM CA bundle for the server certificate; empty = the JVM's trust store. */
    @JsonProperty public String caCertFile = "";
    /** PEM client certificate and PKCS#8 key for mTLS; both empty = server-side TLS only. */
    @JsonProperty public String clientCertFile = "";
    @JsonProperty public String clientKeyFile = "";
    /** Overrides the name checked against the server certificate (SNI / authority). */
    @JsonProperty public String serverName = "";
  }

  public static class ChannelSettings {
    /**
     * The channels: the HTTP adapter at {@code baseUrl}, asking for callbacks at {@code notifyUrl},
     * with the stub's signed callbacks, registered as {@value PaymentChannels#DEFAULT}.
     */
    public PaymentChannels open(String baseUrl, String notifyUrl) {
      return PaymentChannels.single(new HttpPaymentChannel(baseUrl, notifyUrl, Duration.ofMillis(timeoutMs), merchantKey),
          new SignedJsonCallbacks(java.util.Arrays.asList(callbackSecret, previousCallbackSecret)));
    }

    /** External channel; ignored when embedded. */
    @JsonProperty public String baseUrl;
    @JsonProperty public String host = "127.0.0.1";
    @JsonProperty public int embeddedPort = 8090;
    /** The charge / query / close HTTP timeout. */
    @Min(1) @JsonProperty public long timeoutMs = 300;
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
    /** HMAC key for session tokens (the key id "default"); empty with no keys = a random key per start. */
    @JsonProperty public String secret = "";
    /**
     * More token keys, id → secret, for rotation: a token is verified with the key its id names,
     * so tokens signed with a retiring key stay valid while that key is listed.
     */
    @JsonProperty public java.util.Map<String, String> keys = new java.util.LinkedHashMap<>();
    /** The key that signs new tokens; required when more than one key is configured. */
    @JsonProperty public String signingKeyId = "";
    @JsonProperty public long tokenTtlSeconds = 3600;
    /**
     * The session cookie's Secure flag. Unset: when the request came over TLS (an HTTPS connector,
     * or X-Forwarded-Proto on a connector with useForwardedHeaders); true: always, e.g. behind a TLS proxy; false: never.
     */
    @JsonProperty public Boolean secureCookie;
  }

  public static class OrderTimings {
    @JsonProperty public long reservationTtlMs = 60_000;
    @JsonProperty public long unknownFirstQueryMs = 1_000;
    @JsonProperty public long unknownQueryCapMs = 60_000;
    @JsonProperty public long lateNoticeWindowMs = 600_000;
    /** A long-lived order (e.g. a callback storm) continues as new past this many history events. */
    @JsonProperty public int continueAsNewAfterEvents = 4_000;
    /**
     * New orders run their database steps as local activities in the workflow's worker (fewer
     * round trips through the engine). False when the database steps must run in separate
     * activity workers.
     */
    @JsonProperty public boolean localDatabaseSteps = true;

    public OrderSettings toSettings() {
      return new OrderSettings(reservationTtlMs, unknownFirstQueryMs, unknownQueryCapMs, lateNoticeWindowMs,
          continueAsNewAfterEvents, localDatabaseSteps);
    }
  }

  public static class RelaySettings {
    @JsonProperty public boolean enabled = true;
    @JsonProperty public int batchSize = 20;
    @JsonProperty public long pollMs = 200;
    /**
     * How long one delivery waits for the consumer's answer; past it the event stays unpublished
     * and goes again in a later round (the consumer drops the duplicate).
     */
    @Min(1) @JsonProperty public long deliveryTimeoutMs = 5_000;
    /** Where events go; empty = the embedded consumer. */
    @JsonProperty public String consumerUrl = "";
  }

  public static class ConsumerSettings {
    /** Run the fulfillment consumer (own port, own schema and pool) in this process. */
    @JsonProperty public boolean enabled = true;
    @JsonProperty public String host = "127.0.0.1";
    @JsonProperty public int port = 8092;
  }

  /**
   * The API's in-memory sold-out view (docs/DESIGN.md §Workflow design, API gates): a sold-out SKU
   * is refused without a stock read. It learns sold-out flips by LISTEN/NOTIFY and reads every SKU
   * again every {@code refreshMs}; it answers "sold out" only from state learned within
   * {@code boundMs}, else the gate reads the database.
   */
  /** An in-memory view's switch and timing (docs/DESIGN.md §Engines and configuration). */
  public abstract static class ViewSettings {
    /** False: the view is not kept and every check it answers reads the database. */
    @JsonProperty public boolean enabled = true;
    /** How often the view reads the database again: the longest a change it was not told of goes unseen. */
    @Min(10) @JsonProperty public long refreshMs;
    /** The oldest state the view answers from; must exceed refreshMs. */
    @Min(11) @JsonProperty public long boundMs = 2_000;

    ViewSettings(long refreshMs) {
      this.refreshMs = refreshMs;
    }
  }

  /** The sold-out view: LISTEN for flips, a full read of every SKU every refreshMs. */
  public static class StockViewSettings extends ViewSettings {
    public StockViewSettings() {
      super(1_000);
    }

    /** The view on the pool's database (not started), or null when off. */
    public io.flashsale.persistence.StockView open(Database db) {
      if (!enabled) return null;
      return io.flashsale.persistence.StockView.on(db, Duration.ofMillis(refreshMs), Duration.ofMillis(boundMs));
    }
  }

  /** The caller view: revocations and new buyers polled every refreshMs. */
  public static class PrincipalViewSettings extends ViewSettings {
    public PrincipalViewSettings() {
      super(200);
    }

    /** The view on the pool's database (not started), or null when off. */
    public io.flashsale.persistence.PrincipalView open(Database db) {
      return open(db, Duration.ZERO);
    }

    /**
     * {@code tokenLifetime}: how long a token lives at most; a logout older than that (and the
     * clocks' allowance twice) refuses only expired tokens, so the view stops polling it.
     */
    public io.flashsale.persistence.PrincipalView open(Database db, Duration tokenLifetime) {
      if (!enabled) return null;
      Duration forget = tokenLifetime.isZero() ? Duration.ZERO
          : tokenLifetime.plusMillis(2 * io.flashsale.api.auth.TokenService.CLOCK_SKEW_MILLIS);
      return io.flashsale.persistence.PrincipalView.on(db, Duration.ofMillis(refreshMs), Duration.ofMillis(boundMs), forget);
    }
  }

  public static class SeedSettings {
    @JsonProperty public boolean enabled = true;
    @JsonProperty public String tenant = "t1";
    @JsonProperty public String sku = "sku-lab-01";
    @JsonProperty public int total = 20;
    @JsonProperty public long unitPrice = 1990;
    @JsonProperty public int perUserLimit = 3;
  }
}
