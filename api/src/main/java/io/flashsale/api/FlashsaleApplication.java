package io.flashsale.api;

import io.dropwizard.auth.AuthDynamicFeature;
import io.dropwizard.auth.AuthValueFactoryProvider;
import io.dropwizard.core.Application;
import io.dropwizard.core.server.DefaultServerFactory;
import io.dropwizard.core.setup.Bootstrap;
import io.dropwizard.core.setup.Environment;
import io.dropwizard.jetty.HttpConnectorFactory;
import io.dropwizard.lifecycle.Managed;
import io.flashsale.activities.ChannelActivitiesImpl;
import io.flashsale.activities.ChannelClient;
import io.flashsale.activities.Database;
import io.flashsale.activities.Notifications;
import io.flashsale.activities.OrderActivitiesImpl;
import io.flashsale.activities.OrderQueries;
import io.flashsale.activities.Principals;
import io.flashsale.activities.Reconciler;
import io.flashsale.activities.Skus;
import io.flashsale.api.auth.Caller;
import io.flashsale.api.auth.JsonUnauthorizedHandler;
import io.flashsale.api.auth.SessionAuthFilter;
import io.flashsale.api.auth.TokenAuthenticator;
import io.flashsale.api.auth.TokenService;
import io.flashsale.api.cli.ChannelCommand;
import io.flashsale.api.cli.DemoCommand;
import io.flashsale.api.cli.ReconcileCommand;
import io.flashsale.api.cli.RelayCommand;
import io.flashsale.api.cli.WorkerCommand;
import io.flashsale.api.core.WorkflowAudit;
import io.flashsale.api.fulfillment.FulfillmentConsumer;
import io.flashsale.api.outbox.OutboxRelay;
import io.flashsale.api.core.ErrorMappers;
import io.flashsale.api.core.Orders;
import io.flashsale.api.core.TemporalRuntime;
import io.flashsale.api.embedded.EmbeddedStack;
import io.flashsale.api.health.Checks;
import io.flashsale.api.resources.CallbackResource;
import io.flashsale.api.resources.OrderEventsResource;
import io.flashsale.api.resources.OrderResource;
import io.flashsale.api.resources.SessionResource;
import io.flashsale.api.tasks.ReconcileTask;
import io.flashsale.api.tasks.RevokeTask;
import io.flashsale.api.tasks.SkuTask;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;

/** flashsale: REST API, worker and (in the embedded mode) the whole stack in one process. */
public class FlashsaleApplication extends Application<FlashsaleConfiguration> {

  /** What run() built, for the demo command and in-process tests. */
  public record Wiring(Database db, Orders orders, Reconciler reconciler, ChannelClient channel, Skus skus,
      TemporalRuntime temporal, EmbeddedStack stack, FulfillmentConsumer consumer, OutboxRelay relay,
      WorkflowAudit workflowAudit, String jdbcUrl, int apiPort, int adminPort) {}

  private volatile Wiring wiring;

  public static void main(String[] args) throws Exception {
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
    // a path that is not a file names a bundled config (embedded.yml)
    bootstrap.setConfigurationSourceProvider(path -> {
      File f = new File(path);
      if (f.isFile()) return new FileInputStream(f);
      InputStream in = FlashsaleApplication.class.getClassLoader().getResourceAsStream(path);
      if (in == null) throw new FileNotFoundException(path);
      return in;
    });
    bootstrap.addCommand(new DemoCommand(this));
    bootstrap.addCommand(new io.flashsale.api.cli.BenchCommand(this));
    bootstrap.addCommand(new ReconcileCommand());
    bootstrap.addCommand(new ChannelCommand());
    bootstrap.addCommand(new RelayCommand());
    bootstrap.addCommand(new WorkerCommand());
  }

  @Override
  public void run(FlashsaleConfiguration cfg, Environment env) throws Exception {
    int apiPort = port(cfg, true);
    int adminPort = port(cfg, false);

    EmbeddedStack stack = null;
    String jdbcUrl = cfg.database.url;
    String temporalTarget = cfg.temporal.target;
    String channelUrl = cfg.channel.baseUrl;
    if (cfg.embedded) {
      stack = EmbeddedStack.start(cfg.database.embeddedPort, cfg.database.embeddedDataDir, cfg.temporal.embeddedPort,
          cfg.channel.host, cfg.channel.embeddedPort, cfg.channel.callbackSecret);
      jdbcUrl = stack.jdbcUrl();
      temporalTarget = "127.0.0.1:" + cfg.temporal.embeddedPort;
      channelUrl = stack.channelUrl();
      EmbeddedStack started = stack;
      env.lifecycle().manage(new Managed() {
        @Override
        public void stop() {
          started.close();
        }
      });
    }

    Database db = new Database(jdbcUrl, cfg.database.user, cfg.database.password, cfg.database.maxPoolSize);
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

    String notifyUrl = cfg.channel.notifyUrl == null || cfg.channel.notifyUrl.isBlank()
        ? "http://127.0.0.1:" + apiPort + "/callbacks/payment"
        : cfg.channel.notifyUrl;
    ChannelClient channel = new ChannelClient(channelUrl, notifyUrl, Duration.ofMillis(cfg.channel.timeoutMs));

    TemporalRuntime temporal = new TemporalRuntime(temporalTarget, cfg.temporal.namespace, cfg.temporal.workflowCacheSize);
    if (cfg.embedded) temporal.registerSearchAttributes(cfg.temporal.namespace);
    if (cfg.worker) {
      temporal.registerWorker(new OrderActivitiesImpl(db, Duration.ofMillis(cfg.orders.reservationTtlMs)),
          new ChannelActivitiesImpl(channel), cfg.workerWorkflows, cfg.workerActivities);
    }
    env.lifecycle().manage(temporal);

    FulfillmentConsumer consumer = null;
    if (cfg.consumer.enabled) {
      consumer = new FulfillmentConsumer(new Database(FulfillmentConsumer.jdbcUrl(jdbcUrl), cfg.database.user,
          cfg.database.password, 4), cfg.consumer.host, cfg.consumer.port);
      consumer.migrate();
      env.lifecycle().manage(consumer);
    }
    OutboxRelay relay = null;
    if (cfg.relay.enabled) {
      String consumerUrl = cfg.relay.consumerUrl == null || cfg.relay.consumerUrl.isBlank()
          ? "http://" + cfg.consumer.host + ":" + cfg.consumer.port + "/events"
          : cfg.relay.consumerUrl;
      relay = new OutboxRelay(db, consumerUrl, cfg.relay.batchSize, cfg.relay.pollMs, "embedded");
      env.lifecycle().manage(relay);
    }

    Orders orders = new Orders(temporal.client(), cfg.orders.toSettings());
    OrderQueries queries = new OrderQueries(db);
    Principals principals = new Principals(db);
    Reconciler reconciler = new Reconciler(db, channel);
    TokenService tokens = new TokenService(cfg.auth.secret, cfg.auth.tokenTtlSeconds, Clock.systemUTC());

    // stream as written (SSE, CSV): no buffering of the first 8 KiB to compute a Content-Length
    env.jersey().property(org.glassfish.jersey.server.ServerProperties.OUTBOUND_CONTENT_LENGTH_BUFFER, 0);
    env.jersey().register(new AuthDynamicFeature(new SessionAuthFilter.Builder(tokens)
        .setAuthenticator(new TokenAuthenticator(tokens, principals))
        .setPrefix("Bearer")
        .setUnauthorizedHandler(new JsonUnauthorizedHandler())
        .buildAuthFilter()));
    env.jersey().register(new AuthValueFactoryProvider.Binder<>(Caller.class));
    env.jersey().register(new ErrorMappers.MalformedJson());
    env.jersey().register(new ErrorMappers.WebErrors());
    env.jersey().register(new ErrorMappers.Unexpected());
    if (cfg.auth.devLogin) env.jersey().register(new SessionResource(tokens, principals));
    OrderResource orderResource = new OrderResource(orders, queries, skus, cfg.maxCreatesInFlight, cfg.maxExports);
    env.jersey().register(orderResource);
    OrderEventsResource eventsResource = new OrderEventsResource(queries, principals, cfg.maxEventStreams,
        cfg.maxEventStreamMs, cfg.eventStreamHeartbeatMs);
    env.jersey().register(eventsResource);
    env.metrics().register("flashsale.sse.open",
        (com.codahale.metrics.Gauge<Integer>) () -> eventsResource.openStreams(cfg.maxEventStreams));
    env.jersey().register(new CallbackResource(new Notifications(db), queries, orders, cfg.channel.callbackSecret));

    env.admin().addTask(new SkuTask(skus));
    env.admin().addTask(new RevokeTask(principals));
    WorkflowAudit audit = new WorkflowAudit(temporal.service(), temporal.client(), cfg.temporal.namespace);
    env.admin().addTask(new ReconcileTask(reconciler, audit));
    env.metrics().register("flashsale.exports.open",
        (com.codahale.metrics.Gauge<Integer>) orderResource::openExports);
    env.healthChecks().register("postgresql", Checks.postgres(db));
    env.healthChecks().register("temporal", Checks.temporal(temporal.service()));
    env.healthChecks().register("channel", Checks.channel(channel));

    wiring = new Wiring(db, orders, reconciler, channel, skus, temporal, stack, consumer, relay, audit, jdbcUrl,
        apiPort, adminPort);
    EmbeddedStack shown = stack;
    env.lifecycle().addServerLifecycleListener(server -> banner(cfg, shown, apiPort, adminPort));
  }

  private static void banner(FlashsaleConfiguration cfg, EmbeddedStack stack, int apiPort, int adminPort) {
    String api = "http://127.0.0.1:" + apiPort;
    StringBuilder sb = new StringBuilder("\n=== flashsale is up ===\n");
    sb.append("API        ").append(api).append('\n');
    sb.append("admin      http://127.0.0.1:").append(adminPort).append("  (healthcheck, tasks/sku, tasks/reconcile)\n");
    if (stack != null) {
      sb.append("Temporal   127.0.0.1:").append(cfg.temporal.embeddedPort).append("  (namespace ")
          .append(cfg.temporal.namespace).append(")\n");
      sb.append("channel    ").append(stack.channelUrl()).append('\n');
      sb.append("PostgreSQL ").append(stack.jdbcUrl()).append("  data ").append(stack.dataDir()).append('\n');
      sb.append("consumer   http://").append(cfg.consumer.host).append(':').append(cfg.consumer.port)
          .append("/events  (fulfillment; fed by the outbox relay)\n");
    }
    sb.append("\nTry it:\n")
        .append("  TOKEN=$(curl -s -XPOST ").append(api)
        .append("/session -H 'Content-Type: application/json' -d '{\"tenant\":\"t1\",\"subject\":\"user-0042\"}'")
        .append(" | sed 's/.*\"token\":\"\\([^\"]*\\)\".*/\\1/')\n")
        .append("  curl -s -XPOST ").append(api).append("/orders -H \"Authorization: Bearer $TOKEN\"")
        .append(" -H 'Content-Type: application/json' -d '{\"request_key\":\"k1\",\"sku\":\"sku-lab-01\",\"quantity\":1}'\n")
        .append("  curl -s -XPOST ").append(api).append("/orders/ord-0001/pay -H \"Authorization: Bearer $TOKEN\"\n")
        .append("  curl -s ").append(api).append("/orders/ord-0001 -H \"Authorization: Bearer $TOKEN\"\n");
    System.out.println(sb);
  }

  private static int port(FlashsaleConfiguration cfg, boolean application) {
    DefaultServerFactory f = (DefaultServerFactory) cfg.getServerFactory();
    var connectors = application ? f.getApplicationConnectors() : f.getAdminConnectors();
    return ((HttpConnectorFactory) connectors.get(0)).getPort();
  }
}
