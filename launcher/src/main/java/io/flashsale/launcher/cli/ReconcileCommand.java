package io.flashsale.launcher.cli;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/**
 * ./flashsale reconcile: asks the running service's admin port for the reconciliation report, with
 * the admin credential from FLASHSALE_ADMIN_TOKEN when the service is not the local default.
 */
public class ReconcileCommand extends Command {
  public ReconcileCommand() {
    super("reconcile", "print the reconciliation report of a running flashsale");
  }

  @Override
  public void configure(Subparser subparser) {
    subparser.addArgument("--admin").setDefault("http://127.0.0.1:8081").help("admin base URL");
    subparser.addArgument("--format").setDefault("text").choices("text", "json");
    subparser.addArgument("--repair").action(net.sourceforge.argparse4j.impl.Arguments.storeTrue())
        .help("first start a workflow for every non-final order that has none");
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) {
    String token = System.getenv("FLASHSALE_ADMIN_TOKEN");
    HttpJson.Reply r = new HttpJson(ns.getString("admin"), token == null || token.isBlank() ? null : token)
        .post("/tasks/reconcile?format=" + ns.getString("format")
            + (Boolean.TRUE.equals(ns.getBoolean("repair")) ? "&repair=true" : ""), null);
    System.out.print(r.raw());
    if (r.status() != 200) {
      System.err.println("reconcile answered HTTP " + r.status());
      System.exit(1);
    }
  }
}
