package io.flashsale.devstack;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.channel.ChannelStub;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import net.sourceforge.argparse4j.impl.Arguments;
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
    subparser.addArgument("--notify-url").metavar("URL").action(Arguments.append()).required(true)
        .help("a callback URL the merchant configured (repeat for more); a charge naming another is refused");
    subparser.addArgument("--lab").choices("on", "off").setDefault((String) null)
        .help("the fault, release, reset and stats endpoints (default: on only when bound to loopback)");
    subparser.addArgument("--ledger").metavar("FILE").setDefault((String) null)
        .help("keep the channel's ledger in FILE so it survives a restart (default: memory only)");
    subparser.description("The merchant key (" + ChannelStub.MERCHANT_KEY_ENV + ", required) and the callback secret ("
        + ChannelStub.CALLBACK_SECRET_ENV + ") come from the environment, never from the command line.");
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) throws Exception {
    String ledger = ns.getString("ledger");
    String lab = ns.getString("lab");
    List<String> notifyUrls = ns.getList("notify_url");
    ChannelStub stub = ChannelStub.start(new ChannelStub.Settings(ns.getString("host"), ns.getInt("port"),
        System.getenv(ChannelStub.MERCHANT_KEY_ENV), System.getenv(ChannelStub.CALLBACK_SECRET_ENV),
        new LinkedHashSet<>(notifyUrls), lab == null ? null : lab.equals("on"), ledger == null ? null : Path.of(ledger)));
    System.out.println("channel stub at " + stub.baseUrl() + (ledger == null ? "" : ", ledger in " + ledger)
        + " (Ctrl-C to stop)");
    Runtime.getRuntime().addShutdownHook(new Thread(stub::stop));
    Thread.currentThread().join();
  }
}
