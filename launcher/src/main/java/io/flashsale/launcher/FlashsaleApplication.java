package io.flashsale.launcher;

import io.dropwizard.core.Application;
import io.dropwizard.core.server.DefaultServerFactory;
import io.dropwizard.core.setup.Bootstrap;
import io.dropwizard.core.setup.Environment;
import io.dropwizard.jetty.HttpConnectorFactory;
import io.dropwizard.lifecycle.Managed;
import io.flashsale.activities.Safeguards;
import io.flashsale.api.RestApi;
import io.flashsale.api.auth.TokenService;
import io.flashsale.fulfillment.FulfillmentConsumer;
import io.flashsale.launcher.cli.ReconcileCommand;
import io.flashsale.launcher.cli.RelayCommand;
import io.flashsale.launcher.cli.WorkerCommand;
import io.flashsale.outbox.OutboxRelay;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.Skus;
import io.flashsale.reconciliation.Reconciler;
import io.flashsale.reconciliation.WorkflowAudit;
import io.flashsale.workflows.Orders;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** flashsale: REST API, worker and (in the embedded mode) the whole stack in one process. */
public class FlashsaleApplication extends Application<FlashsaleConfiguration> {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FlashsaleApplication.class);

  /** What run() built, for the demo command and in-process tests. */
  public record Wiring(Database db, Orders orders, Reconciler reconciler, PaymentChannel channel, Skus skus,
      TemporalRuntime temporal, io.flashsale.launcher.TemporalEngine engine, LocalStack stack, FulfillmentConsumer consumer, OutboxRelay relay,
      WorkflowAudit workflowAudit, Safeguards safeguards, String jdbcUrl, String channelUrl, int apiPort, int adminPort, String callbackSecret,
      String merchantKey, String deliverySecret, String operatorKey) {}

  /**
   * The warm-up's engine runs and order-history replays: only where this process runs the order
   * workflows (their worker is what they warm) and the warm-up is on (docs/DESIGN.md §Warm from
   * the first buyer).
   */
  static boolean warmsTheWorkflowPath(FlashsaleConfiguration cfg) {
    return cfg.worker && cfg.workerWorkflows && !cfg.warmUp.duration.toJavaDuration().isZero();
  }

  private volatile Wiring wiring;
  /**
   * The payment path's safeguards, given to the worker this process runs (server or worker
   * command). All on; only code holding the instance switches one off, no configuration does.
   */
  private final Safeguards safeguards;

  public FlashsaleApplication() {
    this(new Safeguards());
  }

  /**
   * The order activities this process's worker registers, passed through this first: identity,
   * unless an experiment's own entry point wraps them (X-33's worker dies inside a step).
   */
  private final java.util.function.UnaryOperator<io.flashsale.workflows.OrderActivities> wrapOrderActivities;

  /** With a given safeguards instance: a negative control's own entry point (C29-19's worker JVM). */
  public FlashsaleApplication(Safeguards safeguards) {
    this(safeguards, java.util.function.UnaryOperator.identity());
  }

  /** The same, the worker's order activities wrapped: an experiment's own entry point (test classpath). */
  public FlashsaleApplication(Safeguards safeguards,
      java.util.function.UnaryOperator<io.flashsale.workflows.OrderActivities> wrapOrderActivities) {
    this.safeguards = safeguards;
    this.wrapOrderActivities = wrapOrderActivities;
  }

  public static void main(String[] args) throws Exception {
    GracefulExit.exitOnSigterm = true; // a process of its own: SIGTERM stops it and sets the exit status
    new FlashsaleApplication().run(args);
  }

  public Wiring wiring() {
    return wiring;
  }

  @Override
  public String getName() {
    return "flashsale";
  }

  @Override
  public void initialize(Bootstrap<FlashsaleConfiguration> bootstrap) {
    // a path that is not a file names a bundled config (embedded.yml, in devstack)
    // ${VAR} and ${VAR:-default} in the YAML come from the environment
    bootstrap.setConfigurationSourceProvider(new io.dropwizard.configuration.SubstitutingSourceProvider(path -> {
      File f = new File(path);
      if (f.isFile()) return new FileInputStream(f);
      InputStream in = FlashsaleApplication.class.getClassLoader().getResourceAsStream(path);
      if (in == null) throw new FileNotFoundException(path);
      return in;
    }, new io.dropwizard.configuration.EnvironmentVariableSubstitutor(false)));
    bootstrap.addCommand(new ReconcileCommand());
    bootstrap.addCommand(new RelayCommand());
    bootstrap.addCommand(new io.flashsale.launcher.cli.OperatorNoticeCommand());
    bootstrap.addCommand(new WorkerCommand(safeguards, wrapOrderActivities));
    for (CommandPlugin plugin : java.util.ServiceLoader.load(CommandPlugin.class)) plugin.addCommands(bootstrap, this);
  }

  @Override
  public void run(FlashsaleConfiguration cfg, Environment env) throws Exception {
    try {
      start(cfg, env);
    } catch (Exception | Error e) {
      // the local pieces run in their own process groups: a failed start must not leave them running
      LocalStack started = startedStack;
      if (started != null) started.close();
      throw e;
    }
  }

  private static String randomKey() {
    byte[] key = new byte[32];
    new java.security.SecureRandom().nextBytes(key);
    return java.util.HexFormat.of().formatHex(key);
  }

  /** The local pieces once they run, so a failed start can stop them. */
  private volatile LocalStack startedStack;

  private void start(FlashsaleConfiguration cfg, Environment env) throws Exception {
    SecretsCheck.require(cfg);
    poolSmallBuffers(cfg);
    readBodiesBeforeThreads(cfg, env);
    // managed first, so it stops last: the exit record, once everything else stopped
    GracefulExit exit = new GracefulExit();
    env.lifecycle().manage(exit);
    if (cfg.embedded && (cfg.channel.callbackSecret == null || cfg.channel.callbackSecret.isBlank())) {
      // the local default signs every callback too: a random key per start, shared with the stub, so
      // no local process can post a CHARGED notice the channel did not send
      cfg.channel.callbackSecret = randomKey();
    }
    if (cfg.embedded && (cfg.channel.merchantKey == null || cfg.channel.merchantKey.isBlank())) {
      // and the stub's merchant API answers only this service: nobody else can charge an order
      cfg.channel.merchantKey = randomKey();
    }
    if (cfg.embedded && cfg.auth.operatorKey() == null) {
      // operator signals are proved with the admin credential; the local default has none, so a key
      // of this start (tests and the local admin tasks read it from the wiring)
      cfg.auth.localOperatorKey = randomKey();
    }
    if (cfg.embedded && (cfg.consumer.deliverySecret == null || cfg.consumer.deliverySecret.isBlank())) {
      // the consumer reads only what its relays signed: a random key per start unless a relay of
      // another process needs it (FLASHSALE_DELIVERY_SECRET in embedded.yml)
      cfg.consumer.deliverySecret = randomKey();
    }
    int apiPort = port(cfg, true);
    int adminPort = port(cfg, false);
    if (cfg.auth.devLoginEnabled(cfg.embedded)) {
      if (cfg.embedded) {
        log.info("dev login is on (the local default): POST /session hands out a token for any tenant/subject");
      } else {
        log.warn("DEV LOGIN IS ON OUTSIDE THE LOCAL DEFAULT (auth.devLoginOutsideLocalDefault acknowledges it):"
            + " POST /session hands out a token for any tenant/subject; every session it issues says dev_login: true");
      }
    }
    if (cfg.channel.notifyUrl == null || cfg.channel.notifyUrl.isBlank()) {
      // this API's own callback URL: the only one the local stub calls back
      cfg.channel.notifyUrl = "http://127.0.0.1:" + apiPort + "/callbacks/payment";
    }

    LocalStack stack = null;
    String jdbcUrl = cfg.database.url;
    String temporalTarget = cfg.temporal.target;
    String channelUrl = cfg.channel.baseUrl;
    io.flashsale.launcher.TemporalEngine engine = LocalStack.resolve(cfg);
    if (!cfg.embedded && engine != io.flashsale.launcher.TemporalEngine.EXTERNAL) {
      throw new IllegalArgumentException("temporal.engine " + engine.configName() + " needs the local default"
          + " (embedded: true); production connects to a cluster (engine external)");
    }
    if (cfg.embedded) {
      stack = LocalStack.provider().start(cfg, engine);
      startedStack = stack;
      jdbcUrl = stack.jdbcUrl();
      if (engine != io.flashsale.launcher.TemporalEngine.EXTERNAL) temporalTarget = stack.temporalTarget();
      channelUrl = stack.channelUrl();
      LocalStack started = stack;
      env.lifecycle().manage(new Managed() {
        @Override
        public void stop() {
          started.close();
        }
      });
    }

    Database db = Assembly.pool(cfg.database, jdbcUrl);
    exit.expect("ordersPoolClosed", db::isClosed);
    env.lifecycle().manage(new Managed() {
      @Override
      public void stop() {
        db.close();
      }
    });
    db.migrate();
    Skus skus = new Skus(db);
    if (cfg.seed.enabled && skus.remaining(cfg.seed.tenant, cfg.seed.sku) < 0) {
      skus.upsert(cfg.seed.tenant, cfg.seed.sku, cfg.seed.total, cfg.seed.unitPrice, cfg.seed.perUserLimit);
    }

    io.flashsale.launcher.observe.Tracing tracing = io.flashsale.launcher.observe.Tracing.start(cfg.tracing,
        io.flashsale.launcher.observe.Tracing.serviceName(cfg.tracing, true, cfg.worker));
    // managed before the runtime, so it is closed (what is batched sent) after the worker stopped
    env.lifecycle().manage(new Managed() {
      @Override
      public void stop() {
        tracing.close();
      }
    });
    env.servlets().addFilter("tracing", new io.flashsale.api.observe.HttpTracing(tracing.telemetry()))
        .addMappingForUrlPatterns(null, false, "/*");
    PaymentChannels channels = Assembly.channels(cfg.channel, channelUrl, cfg.channel.notifyUrl, tracing.telemetry());
    PaymentChannel channel = channels.defaultChannel();

    boolean external = engine == io.flashsale.launcher.TemporalEngine.EXTERNAL;
    io.flashsale.launcher.observe.SdkMetrics metrics = new io.flashsale.launcher.observe.SdkMetrics();
    env.admin().addServlet("prometheus", metrics.servlet()).addMapping(io.flashsale.launcher.observe.SdkMetrics.PATH);
    // orders needing an operator, by reason: a metric only, no health check (one stuck order is no outage)
    io.flashsale.launcher.observe.AttentionMetrics.register(metrics.registry(),
        new io.flashsale.persistence.OrderQueries(db)::attentionCounts);
    TemporalRuntime temporal = Assembly.temporal(cfg.temporal, temporalTarget, external, metrics, tracing);
    boolean inMemory = engine == io.flashsale.launcher.TemporalEngine.EMBEDDED;
    if (!inMemory) temporal.awaitReady(cfg.temporal.namespace, Duration.ofSeconds(60));
    temporal.ensureSearchAttributes(cfg.temporal.namespace, inMemory);
    if (cfg.worker) Assembly.registerWorker(cfg, temporal, db, channels, safeguards, wrapOrderActivities);
    env.lifecycle().manage(new Managed() {
      @Override
      public void stop() {
        metrics.close(); // managed before the runtime, so it stops after the worker and the stubs
      }
    });
    env.lifecycle().manage(temporal);
    if (cfg.worker) exit.expect("workerTerminated", temporal::workerTerminated);
    exit.expect("temporalConnectionClosed", temporal::connectionClosed);

    FulfillmentConsumer consumer = null;
    if (cfg.consumer.enabled) {
      consumer = new FulfillmentConsumer(new Database(FulfillmentConsumer.jdbcUrl(jdbcUrl), cfg.database.user,
          cfg.database.password, 4), cfg.consumer.host, cfg.consumer.port, cfg.consumer.deliverySecret);
      consumer.migrate();
      env.lifecycle().manage(consumer);
      exit.expect("consumerStopped", consumer::isStopped);
    }
    OutboxRelay relay = null;
    if (cfg.relay.enabled) {
      String consumerUrl = cfg.relay.consumerUrl == null || cfg.relay.consumerUrl.isBlank()
          ? "http://" + cfg.consumer.host + ":" + cfg.consumer.port + "/events"
          : cfg.relay.consumerUrl;
      relay = Assembly.relay(cfg.relay, db, consumerUrl, cfg.consumer.deliverySecret);
      env.lifecycle().manage(relay);
      exit.expect("relayStopped", relay::isStopped);
    }

    Orders orders = Assembly.orders(cfg, temporal.client());
    io.flashsale.reconciliation.OrphanRepair repair = new io.flashsale.reconciliation.OrphanRepair(db, temporal.service(),
        cfg.temporal.namespace, orders);
    if (cfg.temporal.repairOrphansAtStart && cfg.worker) {
      // after the worker started (managed above): every non-final order gets its workflow back
      env.lifecycle().manage(new Managed() {
        @Override
        public void start() {
          var repaired = repair.run();
          if (!repaired.isEmpty()) log.warn("{} orders had no running workflow and were resumed", repaired.size());
        }
      });
    }
    // the fulfillment check reads the consumer's shipments through its own pool (not checked without one here)
    // the fulfillment check reads the in-process consumer only when the events go to it: with the
    // relay pointed elsewhere its tables stay empty, and the report must say "not checked"
    boolean eventsReachThisConsumer = cfg.relay.consumerUrl == null || cfg.relay.consumerUrl.isBlank();
    Reconciler reconciler = new Reconciler(db, channels, eventsReachThisConsumer ? consumer : null,
        cfg.reconciliation.pendingAgeBound.toJavaDuration());
    TokenService tokens = Assembly.tokens(cfg.auth);
    WorkflowAudit audit = new WorkflowAudit(temporal.service(), temporal.client(), cfg.temporal.namespace);
    // after the pool (managed above), so it stops before the pool closes
    io.flashsale.persistence.StockView stockView = managed(env, Assembly.stockView(cfg.stockView, db));
    io.flashsale.persistence.PrincipalView principalView = managed(env,
        Assembly.principalView(cfg.principalView, db, cfg.auth.tokenTtl.toJavaDuration()));
    RestApi.register(env, Assembly.apiSettings(cfg),
        new RestApi.Services(db, orders, tokens, channels, temporal.service(), reconciler, audit, repair,
            stockView, principalView, () -> safeguards.on(Safeguards.Safeguard.TRANSITION_PRECONDITION)));
    registerCodecEndpoint(env, cfg, stack);
    reconcileSchedule(cfg, env, temporal, inMemory, reconciler, repair);

    // the postmaster itself: down at once when it dies (the pool's check waits out its connection timeout)
    if (stack != null) env.healthChecks().register("postgresql-process", stack.postgresProcessCheck());

    wiring = new Wiring(db, orders, reconciler, channel, skus, temporal, engine, stack, consumer, relay, audit, safeguards, jdbcUrl, channelUrl,
        apiPort, adminPort, cfg.channel.callbackSecret, cfg.channel.merchantKey, cfg.consumer.deliverySecret,
        cfg.auth.operatorKey());
    LocalStack shown = stack;
    io.flashsale.launcher.TemporalEngine shownEngine = engine;
    String shownTarget = temporalTarget;
    // the engine part only where this process runs the order workflows: its worker is what it warms
    WarmUp.EngineCall engineWarmUp = null;
    WarmUp.Replay replayWarmUp = null;
    Runnable afterWarmUp = () -> { };
    if (warmsTheWorkflowPath(cfg)) {
      io.flashsale.workflows.WarmUpRuns runs = new io.flashsale.workflows.WarmUpRuns(temporal.client());
      io.temporal.worker.Worker warmUpWorker = temporal.registerWarmUpWorker(runs.taskQueue(),
          TemporalRuntime.workerOptions(cfg.database.maxPoolSize, cfg.temporal));
      WarmUpCreates creates = new WarmUpCreates(orders, skus);
      engineWarmUp = n -> { // an echo run, then a create that finds no stock
        runs.touch(n);
        creates.create(n);
      };
      io.flashsale.workflows.WarmUpReplays replays = new io.flashsale.workflows.WarmUpReplays(temporal.client());
      replayWarmUp = replays::replay;
      afterWarmUp = () -> {
        warmUpWorker.suspendPolling(); // its queue gets no run after the warm-up
        replays.close();
      };
    }
    WarmUp warmUp = new WarmUp(cfg.warmUp.duration.toJavaDuration(), tokens, skus, engineWarmUp, afterWarmUp)
        .replaying(replayWarmUp);
    env.healthChecks().register("warm-up", warmUp.check());
    env.lifecycle().addServerLifecycleListener(server -> {
      exit.serverStarted(server);
      warmUp.run(server); // the connector serves already; "up" and healthy once the hot path is compiled
      banner(cfg, shown, shownEngine, shownTarget, apiPort, adminPort, warmUp.state());
    });
  }

  /**
   * Reconciliation with orphan repair on a Temporal Schedule (docs/DESIGN.md §Reconciliation on a
   * schedule): a worker hosts its workflow and activity; an instance with an interval creates or
   * updates the schedule once the worker runs; the admin task triggers it.
   */
  private static void reconcileSchedule(FlashsaleConfiguration cfg, Environment env, TemporalRuntime temporal,
      boolean inMemory, Reconciler reconciler, io.flashsale.reconciliation.OrphanRepair repair) {
    java.time.Duration every = cfg.reconciliation.interval();
    if (inMemory) {
      // the in-memory engine (the SDK's test server) implements no schedules
      if (every != null) log.info("reconcile schedule off: the in-memory engine has no schedules"
          + " (POST /tasks/reconcile?repair=true reconciles on demand)");
      env.admin().addTask(new io.flashsale.api.tasks.TriggerReconcileScheduleTask(null,
          "the in-memory engine has no schedules"));
      return;
    }
    // every service process hosts it, an API without order workers too (the production shape runs
    // its workers with the worker command, which has no reconciler): it needs the reconciler's
    // database and channel, which every service process has
    temporal.registerReconcileWorker(new io.flashsale.reconciliation.ScheduledReconciliation(reconciler,
        () -> new WorkflowAudit(temporal.service(), temporal.client(), cfg.temporal.namespace), repair));
    io.flashsale.reconciliation.ReconcileSchedule schedule =
        new io.flashsale.reconciliation.ReconcileSchedule(temporal.client());
    env.admin().addTask(new io.flashsale.api.tasks.TriggerReconcileScheduleTask(schedule, null));
    env.lifecycle().manage(new Managed() {
      @Override
      public void start() {
        String id = io.flashsale.workflows.ReconcileWorkflow.SCHEDULE_ID;
        if (every == null) {
          boolean exists;
          try {
            exists = schedule.exists();
          } catch (RuntimeException e) {
            // nothing is asked of the engine, so one without schedules (the SDK's test server
            // reached over a port, as a second process of the in-memory engine) is no reason to stop
            log.info("reconciliation.scheduleEvery is 0; the engine could not describe schedule {}: {}", id,
                e.getMessage());
            return;
          }
          if (exists) {
            log.info("reconciliation.scheduleEvery is 0: schedule {} exists and stays as it is"
                + " (temporal schedule toggle --pause / delete --schedule-id {})", id, id);
          }
          return;
        }
        var change = schedule.ensure(every);
        log.info("reconcile schedule {} every {} (overlap SKIP): {}", id, cfg.reconciliation.scheduleEvery, change);
      }
    });
  }

  /** Starts the view with the server and closes it at the stop, before the pool (managed earlier) closes; null stays null. */
  private static <V extends io.flashsale.persistence.MemoryView> V managed(Environment env, V view) {
    if (view == null) return null;
    env.lifecycle().manage(new Managed() {
      @Override
      public void start() {
        view.start();
      }

      @Override
      public void stop() {
        view.close();
      }
    });
    return view;
  }

  private static void banner(FlashsaleConfiguration cfg, LocalStack stack, io.flashsale.launcher.TemporalEngine engine,
      String temporalTarget, int apiPort, int adminPort, String warmedUp) {
    String api = "http://127.0.0.1:" + apiPort;
    StringBuilder sb = new StringBuilder("\n=== flashsale is up ===\n");
    sb.append("API        ").append(api).append('\n');
    sb.append("admin      http://127.0.0.1:").append(adminPort).append("  (healthcheck, tasks/sku, tasks/reconcile)\n");
    sb.append("warm-up    ").append(warmedUp).append('\n');
    sb.append("Temporal   ").append(temporalTarget).append("  (").append(engine.configName()).append(", namespace ")
        .append(cfg.temporal.namespace).append(")\n");
    if (stack != null) {
      stack.webUi().ifPresent(ui -> sb.append("Web UI     ").append(ui).append("/namespaces/")
          .append(cfg.temporal.namespace).append("/workflows\n"));
      sb.append("data       ").append(stack.dataDir()).append("  (kept across restarts)\n");
      sb.append("channel    ").append(stack.channelUrl()).append('\n');
      sb.append("PostgreSQL ").append(stack.jdbcUrl()).append("  data ").append(stack.postgresDir())
          .append(stack.postgresDurable() ? "  (durable: fsync on)" : "  (SCRATCH: fsync off, not for real orders)")
          .append('\n');
      sb.append("consumer   http://").append(cfg.consumer.host).append(':').append(cfg.consumer.port)
          .append("/events  (fulfillment; fed by the outbox relay)\n");
    }
    sb.append("\nTry it:\n")
        .append("  TOKEN=$(curl -s -XPOST ").append(api)
        .append("/session -H 'Content-Type: application/json' -d '{\"tenant\":\"t1\",\"subject\":\"user-0042\"}'")
        .append(" | sed 's/.*\"token\":\"\\([^\"]*\\)\".*/\\1/')\n")
        .append("  ORDER=$(curl -s -XPOST ").append(api).append("/orders -H \"Authorization: Bearer $TOKEN\"")
        .append(" -H 'Content-Type: application/json' -d '{\"request_key\":\"k1\",\"sku\":\"sku-lab-01\",\"quantity\":1}'")
        .append(" | sed 's/.*\"order_id\":\"\\([^\"]*\\)\".*/\\1/')\n")
        .append("  curl -s -XPOST ").append(api).append("/orders/$ORDER/pay -H \"Authorization: Bearer $TOKEN\"\n")
        .append("  curl -s ").append(api).append("/orders/$ORDER -H \"Authorization: Bearer $TOKEN\"\n");
    System.out.println(sb);
  }

  /**
   * Dropwizard's connectors pool no buffer under 64 bytes, and Jetty takes one of 12 for every
   * chunk header it writes; unpooled, each was a new direct buffer taken behind one lock, which a
   * crowd of connections queued on (docs/DESIGN.md §Overload). One byte puts it in the first pooled
   * bucket, as Jetty's own default pool does. A configured size other than the default stays.
   */
  static void poolSmallBuffers(FlashsaleConfiguration cfg) {
    if (!(cfg.getServerFactory() instanceof DefaultServerFactory f)) return;
    List<io.dropwizard.jetty.ConnectorFactory> all = new ArrayList<>(f.getApplicationConnectors());
    all.addAll(f.getAdminConnectors());
    for (io.dropwizard.jetty.ConnectorFactory c : all) {
      if (c instanceof HttpConnectorFactory h && h.getMinBufferPoolSize().toBytes() == DROPWIZARD_MIN_BUFFER_POOL_BYTES) {
        h.setMinBufferPoolSize(io.dropwizard.util.DataSize.bytes(1));
      }
    }
  }

  /**
   * On the application connectors, a request reaches a thread only with its whole body read
   * (api's WholeBodyFirst, docs/DESIGN.md §Slow clients): the server's handler is wrapped as the
   * server starts, before any connector accepts.
   */
  static void readBodiesBeforeThreads(FlashsaleConfiguration cfg, Environment env) {
    if (cfg.getServerFactory() instanceof DefaultServerFactory f) {
      for (io.dropwizard.jetty.ConnectorFactory c : f.getApplicationConnectors()) {
        // a body still arriving at the idle timeout would end in a 500, not the deadline's 408
        if (c instanceof HttpConnectorFactory h
            && h.getIdleTimeout().toMilliseconds() <= cfg.bodyReadDeadline.toMilliseconds()) {
          throw new IllegalStateException("bodyReadDeadline (" + cfg.bodyReadDeadline + ") must be shorter than the"
              + " application connector's idleTimeout (" + h.getIdleTimeout() + ")");
        }
      }
    }
    env.lifecycle().addEventListener(new org.eclipse.jetty.util.component.LifeCycle.Listener() {
      @Override
      public void lifeCycleStarting(org.eclipse.jetty.util.component.LifeCycle event) {
        if (event instanceof org.eclipse.jetty.server.Server server) {
          boolean guarded = java.util.Arrays.stream(server.getConnectors())
              .anyMatch(c -> APPLICATION_CONNECTOR.equals(c.getName()));
          if (!guarded) {
            throw new IllegalStateException("no connector named '" + APPLICATION_CONNECTOR + "': request bodies would"
                + " reach threads unread (use the default server with applicationConnectors)");
          }
          server.setHandler(new io.flashsale.api.core.WholeBodyFirst(server.getHandler(), APPLICATION_CONNECTOR,
              cfg.maxBodySize.toBytes(), cfg.bodyReadDeadline.toJavaDuration()));
        }
      }
    });
  }

  /** The name Dropwizard gives its application connectors (the admin ones are "admin"). */
  static final String APPLICATION_CONNECTOR = "application";

  /** Dropwizard's default {@code minBufferPoolSize}. */
  static final long DROPWIZARD_MIN_BUFFER_POOL_BYTES = 64;

  /**
   * The codec endpoint on the admin port (docs/DESIGN.md §Payload encryption) when payloads are
   * encrypted: the Web UI and the temporal CLI decode through it; browsers only from the configured
   * origins and the local dev server's UI.
   */
  private static void registerCodecEndpoint(Environment env, FlashsaleConfiguration cfg, LocalStack stack) {
    FlashsaleConfiguration.PayloadEncryptionSettings p = cfg.temporal.payloadEncryption;
    io.flashsale.workflows.codec.PayloadEncryption codec = Assembly.payloadCodec(p);
    if (codec == null || !p.codecEndpoint) return;
    java.util.Set<String> origins = new java.util.LinkedHashSet<>(p.codecCorsOrigins);
    if (stack != null) {
      stack.webUi().ifPresent(ui -> {
        origins.add(ui);
        origins.add(ui.replace("://127.0.0.1:", "://localhost:"));
      });
    }
    env.admin().addServlet("payload-codec", new io.flashsale.api.codec.CodecServlet(codec, origins, cfg.temporal.namespace))
        .addMapping(io.flashsale.api.codec.CodecServlet.PATH + "/*");
    log.info("payloads encrypted with key {} ({} keys listed); codec endpoint on the admin port at {} for origins {}",
        codec.activeKeyId(), codec.keyIds().size(), io.flashsale.api.codec.CodecServlet.PATH, origins);
  }

  /** The first application (or admin) connector's configured port. */
  public static int port(FlashsaleConfiguration cfg, boolean application) {
    DefaultServerFactory f = (DefaultServerFactory) cfg.getServerFactory();
    var connectors = application ? f.getApplicationConnectors() : f.getAdminConnectors();
    return ((HttpConnectorFactory) connectors.get(0)).getPort();
  }
}
