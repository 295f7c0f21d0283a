package io.flashsale.api.cli;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.channel.ChannelStub;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/** ./flashsale channel: the payment channel stub alone. */
public class ChannelCommand extends Command {
  public ChannelCommand() {
    super("channel", "run the payment channel stub alone");
  }

  @Override
  public void configure(Subparser subparser) {
    subparser.addArgument("--port").type(Integer.class).setDefault(8090);
    subparser.addArgument("--host").setDefault("127.0.0.1");
    subparser.addArgument("--secret").setDefault((String) null);
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) throws Exception {
    ChannelStub stub = ChannelStub.start(ns.getString("host"), ns.getInt("port"), ns.getString("secret"));
    System.out.println("channel stub at " + stub.baseUrl() + " (Ctrl-C to stop)");
    Runtime.getRuntime().addShutdownHook(new Thread(stub::stop));
    Thread.currentThread().join();
  }
}
