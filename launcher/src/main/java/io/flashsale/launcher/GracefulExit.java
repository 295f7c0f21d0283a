package io.flashsale.launcher;

import io.dropwizard.lifecycle.Managed;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntFunction;
import java.util.function.Supplier;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the service stops (docs/DESIGN.md §Engines and configuration, Stopping), and its exit record.
 *
 * <p>On SIGTERM the server stops in this order: its listeners close first (a new connection is
 * refused, a new request on a connection already open gets 503) and open event streams end; the
 * requests in flight get up to {@code server.shutdownGracePeriod} to finish; then the managed
 * pieces stop in the reverse order of their start: the relay, the consumer, the worker (the tasks
 * it took finish, up to 10 s), the Temporal connection, the pools, the local stack. This object is
 * managed first, so it stops last: it writes one line, the exit record, with what it found closed.
 * The process then exits 0 when everything closed in time, 1 when not.
 *
 * <p>The JVM's own answer to SIGTERM is the same orderly stop through the shutdown hook, but with
 * exit status 143 whatever happened; {@link #onSigterm} replaces it when the service runs as a
 * process of its own (not inside a test).
 */
public final class GracefulExit implements Managed {
  private static final Logger log = LoggerFactory.getLogger(GracefulExit.class);

  /** Set by main(): only a process of its own answers SIGTERM with an exit status. */
  static volatile boolean exitOnSigterm;

  private final Map<String, BooleanSupplier> expected = new LinkedHashMap<>();
  private final AtomicBoolean stopping = new AtomicBoolean();
  private volatile Server server;
  private volatile long stopStartedNanos;
  private volatile String signal;
  private volatile boolean clean;

  /** One more fact the record checks once everything stopped, e.g. "workerTerminated". */
  public void expect(String name, BooleanSupplier holds) {
    expected.put(name, holds);
  }

  /** The server, once it runs: its in-flight requests are counted, and SIGTERM stops it. */
  void serverStarted(Server server) {
    this.server = server;
    server.addEventListener(new org.eclipse.jetty.util.component.LifeCycle.Listener() {
      @Override
      public void lifeCycleStopping(org.eclipse.jetty.util.component.LifeCycle event) {
        if (stopStartedNanos == 0) stopStartedNanos = System.nanoTime();
      }
    });
    if (exitOnSigterm) handleSigterm(this::onSigterm);
  }

  /** SIGTERM runs {@code stop}, which sets the exit status, instead of the JVM's exit 143. */
  private static void handleSigterm(Runnable stop) {
    try {
      sun.misc.Signal.handle(new sun.misc.Signal("TERM"), signal -> stop.run());
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      // e.g. -Xrs: the JVM's shutdown hook still runs the same stop, with exit 143
      log.warn("SIGTERM is left to the JVM ({}): the stop is the same, the exit status is 143", e.toString());
    }
  }

  /**
   * A process without an HTTP server (the {@code worker} command). On SIGTERM {@code stop} runs,
   * answering what it found closed; the exit record is one line and the exit status is 0 when
   * every fact holds, 1 when not. Ctrl-C, or SIGTERM inside a test (no process of its own), runs
   * the same stop through the JVM's shutdown hook, with the JVM's own exit status.
   */
  public static void stopOnSigterm(String process, Supplier<Map<String, Boolean>> stop) {
    AtomicBoolean stopped = new AtomicBoolean();
    ToIntFunction<String> stopAndRecord = cause -> {
      long started = System.nanoTime();
      Map<String, Boolean> facts;
      try {
        facts = stop.get();
      } catch (RuntimeException e) {
        facts = Map.of("stopCompleted", false);
        System.err.println("flashsale " + process + ": the stop did not complete cleanly: " + e);
      }
      boolean ok = !facts.isEmpty() && !facts.containsValue(false);
      String shown = facts.entrySet().stream().map(f -> f.getKey() + "=" + f.getValue())
          .collect(java.util.stream.Collectors.joining(" "));
      System.out.printf("flashsale %s stopped %s in %.1f s: %s; %s%n", process, cause,
          (System.nanoTime() - started) / 1e9, shown, ok ? "clean" : "NOT CLEAN");
      return ok ? 0 : 1;
    };
    // Ctrl-C and any other exit: the same stop, the JVM's own exit status
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (stopped.compareAndSet(false, true)) stopAndRecord.applyAsInt("on exit");
    }, process + "-stop"));
    if (!exitOnSigterm) return;
    handleSigterm(() -> {
      if (!stopped.compareAndSet(false, true)) return; // a second SIGTERM while stopping changes nothing
      int status = stopAndRecord.applyAsInt("after SIGTERM");
      System.out.println("flashsale " + process + ": exit " + status);
      System.exit(status);
    });
  }

  /** Requests the server still runs (its graceful handlers' count); 0 once drained. */
  long requestsInFlight() {
    Server s = server;
    if (s == null) return 0;
    long n = 0;
    for (GracefulHandler h : s.getDescendants(GracefulHandler.class)) n += h.getCurrentRequestCount();
    return n;
  }

  private void onSigterm() {
    if (!stopping.compareAndSet(false, true)) return; // a second SIGTERM while stopping changes nothing
    signal = "SIGTERM";
    stopStartedNanos = System.nanoTime();
    Server s = server;
    log.info("SIGTERM: stopping. New connections are refused and new requests get 503; {} requests in flight get"
        + " up to {} ms, then the worker finishes its tasks and the pools close", requestsInFlight(), s.getStopTimeout());
    Throwable failure = null;
    try {
      s.stop();
    } catch (Throwable e) {
      failure = e;
    }
    // the logging stopped with the server: what is left goes to stderr
    if (failure != null) System.err.println("flashsale: the stop did not complete cleanly: " + failure);
    int status = clean && failure == null ? 0 : 1;
    System.err.println("flashsale: exit " + status);
    System.exit(status);
  }

  @Override
  public void stop() {
    long started = stopStartedNanos == 0 ? System.nanoTime() : stopStartedNanos;
    List<String> facts = new ArrayList<>();
    long inFlight = requestsInFlight();
    boolean ok = inFlight == 0;
    facts.add("requestsInFlight=" + inFlight);
    for (Map.Entry<String, BooleanSupplier> e : expected.entrySet()) {
      boolean holds;
      try {
        holds = e.getValue().getAsBoolean();
      } catch (RuntimeException failed) {
        holds = false;
      }
      ok &= holds;
      facts.add(e.getKey() + "=" + holds);
    }
    clean = ok;
    String by = signal == null ? "" : " after " + signal;
    String line = String.format("flashsale stopped%s in %.1f s: %s; %s", by, (System.nanoTime() - started) / 1e9,
        String.join(" ", facts), signal == null ? (ok ? "clean" : "NOT CLEAN") : "exit " + (ok ? 0 : 1));
    if (ok) {
      log.info(line);
    } else {
      log.error(line);
    }
  }
}
