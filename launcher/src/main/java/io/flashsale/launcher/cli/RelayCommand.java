package io.flashsale.launcher.cli;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.outbox.OutboxRelay;
import io.flashsale.persistence.Database;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/** ./flashsale relay: one more outbox relay, alone in its own process, until it is stopped. */
public class RelayCommand extends Command {
  /** Where the relay reads the consumer's delivery secret (consumer.deliverySecret) by default. */
  public static final String DELIVERY_SECRET_ENV = "FLASHSALE_DELIVERY_SECRET";

  public RelayCommand() {
    super("relay", "run an outbox relay alone (next to a running service's database and consumer)");
  }

  @Override
  public void configure(Subparser subparser) {
    subparser.addArgument("--database-url").required(true).help("JDBC url of the orders database");
    subparser.addArgument("--user").setDefault("postgres");
    // never on the command line (every local user can read argv): from the environment
    subparser.addArgument("--password-env").setDefault("FLASHSALE_DB_PASSWORD")
        .help("the environment variable holding the database password (default FLASHSALE_DB_PASSWORD)");
    subparser.addArgument("--consumer-url").setDefault("http://127.0.0.1:8092/events");
    subparser.addArgument("--delivery-secret-env").setDefault(DELIVERY_SECRET_ENV)
        .help("the environment variable holding the consumer's delivery secret, which signs every delivery"
            + " (default " + DELIVERY_SECRET_ENV + ")");
    subparser.addArgument("--batch").type(Integer.class).setDefault(20);
    subparser.addArgument("--poll-ms").type(Long.class).setDefault(200L);
    subparser.addArgument("--name").setDefault("cli");
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) throws Exception {
    String password = System.getenv().getOrDefault(ns.getString("password_env"), "");
    String secretEnv = ns.getString("delivery_secret_env");
    String deliverySecret = System.getenv(secretEnv);
    // the consumer refuses an unsigned delivery: a relay without the secret would only retry
    String wrong = io.flashsale.launcher.SecretsCheck.problem(secretEnv, deliverySecret);
    if (wrong != null) {
      throw new IllegalArgumentException(wrong + ": the consumer's delivery secret (consumer.deliverySecret) signs"
          + " every delivery");
    }
    Database db = new Database(ns.getString("database_url"), ns.getString("user"), password, 2);
    OutboxRelay relay = new OutboxRelay(db, ns.getString("consumer_url"), deliverySecret, ns.getInt("batch"),
        ns.getLong("poll_ms"), ns.getString("name"));
    System.out.println("relay " + ns.getString("name") + " delivering to " + ns.getString("consumer_url"));
    while (true) {
      int n;
      try {
        n = relay.relayOnce();
      } catch (RuntimeException e) { // database down or pool exhausted: back off, keep relaying
        System.err.println("relay round failed: " + e.getMessage());
        Thread.sleep(Math.max(1_000, ns.getLong("poll_ms")));
        continue;
      }
      if (n > 0) System.out.println("relayed " + n + " (total " + relay.delivered() + ")");
      if (n < ns.getInt("batch")) Thread.sleep(ns.getLong("poll_ms"));
    }
  }
}
