package io.flashsale.api;

import io.dropwizard.core.Configuration;
import io.dropwizard.core.server.DefaultServerFactory;
import io.dropwizard.jetty.HttpConnectorFactory;

/** A test application's configuration: both connectors on 127.0.0.1, free ports, only the service's own error mappers. */
public final class LoopbackConfig {
  private LoopbackConfig() {}

  public static Configuration create() {
    Configuration cfg = new Configuration();
    DefaultServerFactory f = (DefaultServerFactory) cfg.getServerFactory();
    f.setRegisterDefaultExceptionMappers(false);
    for (var connectors : java.util.List.of(f.getApplicationConnectors(), f.getAdminConnectors())) {
      ((HttpConnectorFactory) connectors.get(0)).setBindHost("127.0.0.1");
      ((HttpConnectorFactory) connectors.get(0)).setPort(0);
    }
    return cfg;
  }
}
