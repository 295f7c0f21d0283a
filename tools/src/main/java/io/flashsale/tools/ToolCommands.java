package io.flashsale.tools;

import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.launcher.CommandPlugin;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;

/** The demo and the benchmarks as commands of the launcher (`./flashsale demo`, `./flashsale bench`). */
public final class ToolCommands implements CommandPlugin {
  @Override
  public void addCommands(Bootstrap<FlashsaleConfiguration> bootstrap, FlashsaleApplication app) {
    bootstrap.addCommand(new DemoCommand(app));
    bootstrap.addCommand(new BenchCommand(app));
  }
}
