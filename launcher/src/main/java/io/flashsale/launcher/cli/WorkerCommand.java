package io.flashsale.launcher.cli;

import io.dropwizard.core.cli.ConfiguredCommand;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.launcher.Assembly;
import io.flashsale.launcher.FlashsaleConfiguration;
import io.flashsale.launcher.GracefulExit;
import io.flashsale.launcher.TemporalRuntime;
import io.flashsale.launcher.observe.SdkMetrics;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.persistence.Database;
import io.flashsale.workflows.OrderActivities;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import net.sourceforge.argparse4j.inf.Namespace;

/**
 * ./flashsale worker config.yml: workflows + activities only, against an external PostgreSQL,
 * Temporal frontend and channel (the split production mode; run more of them to scale out).
 */
public class WorkerCommand extends ConfiguredCommand<FlashsaleConfiguration> {
  private final io.flashsale.activities.Safeguards safeguards;
  private final UnaryOperator<OrderActivities> wrapOrderActivities;

  public WorkerCommand() {
    this(new io.flashsale.activities.Safeguards());
  }

  /** The activities get this instance (all on, unless a negative control's entry point switched one off). */
  public WorkerCommand(io.flashsale.activities.Safeguards safeguards) {
    this(safeguards, UnaryOperator.identity());
  }

  /** The same, the order activities wrapped by an experiment's entry point (identity otherwise). */
  public WorkerCommand(io.flashsale.activities.Safeguards safeguards, UnaryOperator<OrderActivities> wrapOrderActivities) {
    super("worker", "run a Temporal worker for orders (no API) against the configured database, Temporal, channel");
    this.safeguards = safeguards;
    this.wrapOrderActivities = wrapOrderActivities;
  }

  @Override
  public void configure(net.sourceforge.argparse4j.inf.Subparser subparser) {
    super.configure(subparser);
    subparser.addArgument("--metrics-port").dest("metricsPort").type(Integer.class).setDefault(0)
        .help("serve the Temporal SDK metrics at http://HOST:PORT" + SdkMetrics.PATH + " (0: off)");
    subparser.addArgument("--metrics-host").dest("metricsHost").setDefault("127.0.0.1")
        .help("the address the metrics port binds (default 127.0.0.1)");
  }

  @Override
  protected void run(Bootstrap<FlashsaleConfiguration> bootstrap, Namespace ns, FlashsaleConfiguration cfg)
      throws Exception {
    if (cfg.database.url == null || cfg.channel.baseUrl == null || cfg.channel.notifyUrl == null || cfg.channel.notifyUrl.isBlank()) {
      throw new IllegalArgumentException("a worker needs database.url, channel.baseUrl and channel.notifyUrl");
    }
    io.flashsale.launcher.SecretsCheck.requireForWorker(cfg);
    Database db = Assembly.pool(cfg.database, cfg.database.url);
    io.flashsale.launcher.observe.Tracing tracing = io.flashsale.launcher.observe.Tracing.start(cfg.tracing,
        io.flashsale.launcher.observe.Tracing.serviceName(cfg.tracing, false, true));
    PaymentChannels channels = Assembly.channels(cfg.channel, cfg.channel.baseUrl, cfg.channel.notifyUrl,
        tracing.telemetry());
    SdkMetrics metrics = new SdkMetrics();
    Integer metricsPort = ns.getInt("metricsPort");
    if (metricsPort != null && metricsPort > 0) {
      metrics.serve(ns.getString("metricsHost"), metricsPort);
      System.out.println("worker metrics at http://" + ns.getString("metricsHost") + ":" + metricsPort + SdkMetrics.PATH);
    }
    TemporalRuntime temporal = Assembly.temporal(cfg.temporal, cfg.temporal.target, true, metrics, tracing);
    // a worker may be the first process on a namespace: an unregistered attribute would fail its workflow tasks
    temporal.ensureSearchAttributes(cfg.temporal.namespace, false);
    Assembly.registerWorker(cfg, temporal, db, channels, safeguards, wrapOrderActivities);
    temporal.start();
    System.out.println("worker polling " + cfg.temporal.target + " (workflows=" + cfg.workerWorkflows + ", activities="
        + cfg.workerActivities + ", pid " + ProcessHandle.current().pid() + ")");
    GracefulExit.stopOnSigterm("worker", () -> {
      temporal.stop(); // the tasks it took finish (up to 10 s) and report their results
      tracing.close(); // their spans sent
      metrics.close();
      db.close();
      Map<String, Boolean> closed = new LinkedHashMap<>();
      closed.put("workerTerminated", temporal.workerTerminated());
      closed.put("connectionClosed", temporal.connectionClosed());
      return closed;
    });
    Thread.currentThread().join();
  }
}
