package io.flashsale.devstack.cluster;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import java.nio.file.Path;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/** ./flashsale cluster: the production shape on one machine, until Ctrl-C (docs/DESIGN.md §The production shape on one machine). */
public class ClusterCommand extends Command {
  public ClusterCommand() {
    super("cluster", "Temporal server on PostgreSQL, its Web UI and the service, as separate processes");
  }

  @Override
  public void configure(Subparser subparser) {
    subparser.addArgument("--data").metavar("DIR").setDefault("data/cluster")
        .help("where PostgreSQL, the service's state and the logs live (kept across starts)");
    subparser.addArgument("--temporal-port").type(Integer.class).setDefault(7233)
        .help("the frontend's port; the server's other services use the next ones (0: a free range)");
    subparser.addArgument("--ui-port").type(Integer.class).setDefault(8233);
    subparser.addArgument("--api-port").type(Integer.class).setDefault(8080);
    subparser.addArgument("--admin-port").type(Integer.class).setDefault(8081);
    subparser.addArgument("--without-service").action(net.sourceforge.argparse4j.impl.Arguments.storeTrue())
        .help("only the Temporal server, its PostgreSQL and the Web UI: API, worker and relay processes join it"
            + " with --engine external and FLASHSALE_TEMPORAL_TLS_DIR=<data>/tls (or a benchmark does)");
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) throws Exception {
    Path home = Path.of(System.getProperty("flashsale.home", ".")).toAbsolutePath().normalize();
    Path data = Path.of(ns.getString("data"));
    if (!data.isAbsolute()) data = home.resolve(data);
    long t0 = System.nanoTime();
    Cluster cluster = Cluster.start(new Cluster.Settings(home, data, ns.getInt("temporal_port"), ns.getInt("ui_port"),
        ns.getInt("api_port"), ns.getInt("admin_port"), !ns.getBoolean("without_service")), System.out::println, true);
    System.out.println(cluster.banner() + "Started in " + (System.nanoTime() - t0) / 1_000_000 + " ms (Ctrl-C stops"
        + " what started, newest first: the service, the UI, the Temporal server, then PostgreSQL)");
    Thread.currentThread().join();
  }
}
