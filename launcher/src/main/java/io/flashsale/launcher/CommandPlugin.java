package io.flashsale.launcher;

import io.dropwizard.core.setup.Bootstrap;

/**
 * Commands that live outside the launcher (the tools: demo, bench) and run on its stack. Found
 * with {@link java.util.ServiceLoader} when their module is on the classpath, so the launcher does
 * not depend on the modules that depend on it.
 */
public interface CommandPlugin {
  void addCommands(Bootstrap<FlashsaleConfiguration> bootstrap, FlashsaleApplication app);
}
