package io.flashsale.api.core;

import io.dropwizard.core.setup.Environment;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.component.ContainerLifeCycle;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * Every connector reads header values exactly as sent. Jetty keeps a per-connection cache of
 * header lines (Authorization and Cookie among them) that by default matches values ignoring
 * letter case: a token that differs from one sent earlier on the same kept-alive connection only
 * in the case of one letter is read as that earlier token. Tokens are case-sensitive base64url,
 * so the cache must be too (docs/DESIGN.md §API, "Requests on a kept-alive connection").
 */
public final class ExactHeaders {
  private ExactHeaders() {}

  /** Applied when the server starts, before any connector accepts a connection. */
  public static void install(Environment env) {
    env.lifecycle().addEventListener(new LifeCycle.Listener() {
      @Override
      public void lifeCycleStarting(LifeCycle event) {
        if (event instanceof Server server) apply(server);
      }
    });
  }

  static void apply(Server server) {
    for (Connector connector : server.getConnectors()) {
      // the HTTP factory sits inside Dropwizard's instrumented wrapper (and behind TLS), so search the beans
      var http = connector instanceof ContainerLifeCycle c
          ? c.getContainedBeans(HttpConfiguration.ConnectionFactory.class) : java.util.List.<HttpConfiguration.ConnectionFactory>of();
      if (http.isEmpty()) throw new IllegalStateException("no HTTP configuration found on connector " + connector);
      for (HttpConfiguration.ConnectionFactory f : http) f.getHttpConfiguration().setHeaderCacheCaseSensitive(true);
    }
  }
}
