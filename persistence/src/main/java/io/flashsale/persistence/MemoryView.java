package io.flashsale.persistence;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

/**
 * A copy of database state in memory that the API answers from while it is fresh, and reads the
 * database instead of once it is not ({@link StockView}, {@link PrincipalView}). Each keeps it by
 * a thread and a connection of its own, started and closed with the process.
 */
public interface MemoryView extends AutoCloseable {
  void start();

  @Override
  void close();

  /** Milliseconds since the read the answers come from started; -1 before the first. */
  long ageMillis();

  /** The oldest state the view answers from. */
  long boundMillis();

  /** True when the view answers from memory (its last read is within the bound). */
  default boolean fresh() {
    long age = ageMillis();
    return age >= 0 && age <= boundMillis();
  }

  /** One line for the health check and logs. */
  String describe();

  /** What the health check shows beside the age, the bound and freshness. */
  Map<String, Object> details();

  /**
   * The properties of a view's own connection: named in pg_stat_activity, kept alive, and a read
   * on a connection that went silent fails instead of hanging (the view goes stale meanwhile).
   */
  /** The view's daemon thread, started. */
  static Thread startThread(Runnable body, String name) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  /**
   * Stops a view's thread: closes its connection (which wakes a thread blocked on it), interrupts
   * it and waits up to 5 s. The caller has marked the view closed first, so the thread does not
   * reconnect.
   */
  static void stopThread(Thread thread, java.sql.Connection current) {
    try {
      if (current != null) current.close();
    } catch (java.sql.SQLException | RuntimeException ignored) {
      // closing is all that is wanted
    }
    if (thread == null) return;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static Properties connectionProperties(String applicationName, Duration bound) {
    Properties props = new Properties();
    props.setProperty("ApplicationName", applicationName);
    props.setProperty("tcpKeepAlive", "true");
    props.setProperty("socketTimeout", Long.toString(Math.max(10, bound.toSeconds() * 5)));
    props.setProperty("connectTimeout", "5");
    return props;
  }
}
