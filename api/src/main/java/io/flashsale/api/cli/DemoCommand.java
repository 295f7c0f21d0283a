package io.flashsale.api.cli;

import io.dropwizard.core.cli.ServerCommand;
import io.dropwizard.core.setup.Environment;
import io.flashsale.api.FlashsaleApplication;
import io.flashsale.api.FlashsaleConfiguration;
import java.util.concurrent.atomic.AtomicReference;
import net.sourceforge.argparse4j.inf.Namespace;
import org.eclipse.jetty.server.Server;

/** ./flashsale demo: the server stack, a scripted sale against it, the result table, exit. */
public class DemoCommand extends ServerCommand<FlashsaleConfiguration> {
  private final FlashsaleApplication app;

  public DemoCommand(FlashsaleApplication app) {
    super(app, "demo", "start the embedded stack, run a short scripted flash sale, print the result");
    this.app = app;
  }

  @Override
  public void configure(net.sourceforge.argparse4j.inf.Subparser subparser) {
    super.configure(subparser);
    subparser.addArgument("--keep").action(net.sourceforge.argparse4j.impl.Arguments.storeTrue())
        .help("keep the stack running after the demo (e.g. for ./flashsale reconcile)");
  }

  @Override
  protected void run(Environment env, Namespace ns, FlashsaleConfiguration cfg) throws Exception {
    AtomicReference<Server> server = new AtomicReference<>();
    env.lifecycle().addServerLifecycleListener(server::set);
    super.run(env, ns, cfg);
    int code = 0;
    try {
      FlashsaleApplication.Wiring w = app.wiring();
      boolean clean = new DemoScript("http://127.0.0.1:" + w.apiPort(), "http://127.0.0.1:" + w.adminPort(),
          w.channel().baseUrl(), System.out).run();
      code = clean ? 0 : 1;
    } catch (Exception e) {
      e.printStackTrace();
      code = 2;
    }
    if (Boolean.TRUE.equals(ns.getBoolean("keep"))) {
      System.out.println("\nthe stack keeps running (Ctrl-C to stop); try: ./flashsale reconcile");
      return;
    }
    if (server.get() != null) server.get().stop();
    System.exit(code);
  }
}
