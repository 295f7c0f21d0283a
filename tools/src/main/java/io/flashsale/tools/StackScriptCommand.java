package io.flashsale.tools;

import io.dropwizard.core.cli.ServerCommand;
import io.dropwizard.core.setup.Environment;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;
import java.util.concurrent.atomic.AtomicReference;
import net.sourceforge.argparse4j.inf.Namespace;
import org.eclipse.jetty.server.Server;

/** Starts the whole server stack, runs a script against it, then stops it (or keeps it running). */
abstract class StackScriptCommand extends ServerCommand<FlashsaleConfiguration> {
  private final FlashsaleApplication app;

  protected StackScriptCommand(FlashsaleApplication app, String name, String description) {
    super(app, name, description);
    this.app = app;
  }

  /** Runs against the started stack; returns the process exit code. */
  protected abstract int script(FlashsaleApplication.Wiring wiring, Namespace ns) throws Exception;

  protected boolean keepRunning(Namespace ns) {
    return false;
  }

  /** False: PostgreSQL as ./flashsale server runs it (fsync and full_page_writes on), in the run's own folder. */
  protected boolean scratch(Namespace ns) {
    return true;
  }

  /**
   * A scripted run gets a data folder of its own (deleted afterwards unless the stack keeps
   * running), so it starts from the same state every time and never touches the server's data/.
   * Its PostgreSQL is scratch too: fsync off (it says so at start; the bench's --fsync-cost
   * measures the difference).
   */
  @Override
  protected void run(io.dropwizard.core.setup.Bootstrap<FlashsaleConfiguration> bootstrap, Namespace ns,
      FlashsaleConfiguration cfg) throws Exception {
    if ("data".equals(cfg.dataDir)) {
      java.nio.file.Path scratch = java.nio.file.Files.createTempDirectory("flashsale-" + getName() + "-");
      cfg.dataDir = scratch.toString();
      if (scratch(ns)) cfg.database.embeddedDurable = false;
      if (!keepRunning(ns)) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(scratch)));
      }
    }
    super.run(bootstrap, ns, cfg);
  }

  static void deleteTree(java.nio.file.Path root) {
    try (var paths = java.nio.file.Files.walk(root)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException ignored) {
      // a temp folder left behind is harmless
    }
  }

  @Override
  protected void run(Environment env, Namespace ns, FlashsaleConfiguration cfg) throws Exception {
    AtomicReference<Server> server = new AtomicReference<>();
    env.lifecycle().addServerLifecycleListener(server::set);
    super.run(env, ns, cfg);
    int code;
    try {
      code = script(app.wiring(), ns);
    } catch (Exception e) {
      e.printStackTrace();
      code = 2;
    }
    if (keepRunning(ns)) {
      System.out.println("\nthe stack keeps running (Ctrl-C to stop); try: ./flashsale reconcile");
      return;
    }
    if (server.get() != null) server.get().stop();
    System.exit(code);
  }
}
