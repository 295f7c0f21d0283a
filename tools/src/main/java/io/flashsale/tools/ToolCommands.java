package io.flashsale.tools;

import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.launcher.CommandPlugin;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;

/** The demo, the benchmarks and the load client as commands of the launcher (`./flashsale demo`, `bench`, `load`). */
public final class ToolCommands implements CommandPlugin {
  @Override
  public void addCommands(Bootstrap<FlashsaleConfiguration> bootstrap, FlashsaleApplication app) {
    bootstrap.addCommand(new DemoCommand(app));
    bootstrap.addCommand(new BenchCommand(app));
    bootstrap.addCommand(new LoadCommand());
  }
}
