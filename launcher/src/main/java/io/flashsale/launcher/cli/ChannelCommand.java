package io.flashsale.launcher.cli;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.channel.ChannelStub;
import java.nio.file.Path;
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
    subparser.addArgument("--ledger").metavar("FILE").setDefault((String) null)
        .help("keep the channel's ledger in FILE so it survives a restart (default: memory only)");
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) throws Exception {
    String ledger = ns.getString("ledger");
    ChannelStub stub = ChannelStub.start(ns.getString("host"), ns.getInt("port"), ns.getString("secret"),
        ledger == null ? null : Path.of(ledger));
    System.out.println("channel stub at " + stub.baseUrl() + (ledger == null ? "" : ", ledger in " + ledger)
        + " (Ctrl-C to stop)");
    Runtime.getRuntime().addShutdownHook(new Thread(stub::stop));
    Thread.currentThread().join();
  }
}
