package io.flashsale.launcher;

import com.codahale.metrics.health.HealthCheck;
import java.io.File;
import java.io.IOException;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * The local default's own pieces (PostgreSQL, the Temporal engine, the channel stub), started in
 * this process when {@code embedded: true}. The launcher only knows this seam: the pieces live in
 * the {@code devstack} module, found with {@link ServiceLoader} when it is on the classpath, so the
 * production distribution carries none of them (docs/DESIGN.md §Modules).
 */
public interface LocalStack extends AutoCloseable {

  /** What starts a local stack; {@code devstack} provides the one implementation. */
  interface Provider {
    /** The engine the local default runs: {@code auto} resolved (the dev server if installed, else in-memory). */
    TemporalEngine resolve(FlashsaleConfiguration cfg);

    /** Starts the local pieces; {@code engine} is already resolved (never AUTO). */
    LocalStack start(FlashsaleConfiguration cfg, TemporalEngine engine) throws IOException;
  }

  TemporalEngine engine();

  /** The frontend of the local engine. */
  String temporalTarget();

  String jdbcUrl();

  String channelUrl();

  Optional<String> webUi();

  /** The data folder, kept across restarts. */
  File dataDir();

  File postgresDir();

  /** False for a scratch PostgreSQL (fsync off). */
  boolean postgresDurable();

  /** The local postmaster itself: down at once when it dies. */
  HealthCheck postgresProcessCheck();

  @Override
  void close();

  /**
   * The engine to run: outside the local default {@code auto} means the cluster ({@code external});
   * the local default asks the provider.
   */
  static TemporalEngine resolve(FlashsaleConfiguration cfg) {
    if (!cfg.embedded) return cfg.temporal.engine == TemporalEngine.AUTO ? TemporalEngine.EXTERNAL : cfg.temporal.engine;
    return provider().resolve(cfg);
  }

  /** The provider on the classpath; the local default cannot start without one. */
  static Provider provider() {
    return ServiceLoader.load(Provider.class).findFirst().orElseThrow(() -> new IllegalStateException(
        "embedded: true (the local default) needs the devstack module on the classpath (./flashsale runs it);"
            + " this distribution is the production one: set embedded: false and connect to PostgreSQL, Temporal"
            + " and the payment channel (docker/README.md)"));
  }
}
