package io.flashsale.devstack;

import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.devstack.cluster.ClusterCommand;
import io.flashsale.devstack.replay.ReplayCommand;
import io.flashsale.launcher.CommandPlugin;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;

/**
 * The commands that need this module's pieces: {@code channel} (the stub on its own) and
 * {@code replay} (the replay gate, which replays histories on Temporal's in-process test engine),
 * {@code cluster} (the production shape on one machine, from the installed server binaries).
 */
public final class DevstackCommands implements CommandPlugin {
  @Override
  public void addCommands(Bootstrap<FlashsaleConfiguration> bootstrap, FlashsaleApplication app) {
    bootstrap.addCommand(new ChannelCommand());
    bootstrap.addCommand(new ReplayCommand());
    bootstrap.addCommand(new ClusterCommand());
  }
}
