package io.flashsale.launcher;

import com.codahale.metrics.health.HealthCheck;
import io.flashsale.api.auth.TokenService;
import io.flashsale.persistence.Skus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API's hot path run before the instance says it is up (docs/DESIGN.md §Warm from the first
 * buyer): for {@code duration}, a few loopback clients send creates for a SKU with no stock in a
 * tenant of its own, as a crowd of distinct buyers, through the real connector, so the HTTP stack,
 * authentication, the per-principal state and the sold-out answer are loaded and compiled when the
 * first buyers of a sale arrive. Nothing is ordered: every answer is 409 SOLD_OUT. Before that, a
 * few clients make up to {@link #ENGINE_RUNS} runs with no effect through the engine, each started
 * and answered by an update as a create is ({@link io.flashsale.workflows.WarmUpRuns}), then a
 * create of that SKU through the order workflow and its database step ({@link WarmUpCreates}), so a
 * create that finds stock meets a compiled engine client and worker too, and the order workflow's own
 * code replays recorded histories ({@link io.flashsale.workflows.WarmUpReplays}). The {@code
 * warm-up} health check is unhealthy until it ends, so a load balancer sends no buyer to a cold
 * instance; the banner comes after it. Its spans are not sampled (an unsampled
 * {@code traceparent}), so a trace log does not fill with them.
 */
final class WarmUp {
  private static final Logger log = LoggerFactory.getLogger(WarmUp.class);
  static final String TENANT = "flashsale-warm-up";
  static final String SKU = "warm-up-sold-out";
  /** Distinct buyers: each stays well under its rate limit while the clients go round them. */
  static final int BUYERS = 2_000;
  static final int CLIENTS = 4;
  /** A parent that is not sampled: the requests' spans are neither recorded nor exported. */
  private static final String UNSAMPLED_TRACE = "5".repeat(32);
  private static final String UNSAMPLED_SPAN = "6".repeat(16);
  /** The same parent as a W3C traceparent header, flags 00: not sampled. */
  private static final String UNSAMPLED_PARENT = "00-" + UNSAMPLED_TRACE + "-" + UNSAMPLED_SPAN + "-00";

  /** Answers in a row other than 409: the warm-up is not reaching the sold-out answer, so it stops. */
  static final int GIVE_UP_AFTER = 200;

  /** Engine round trips of the warm-up: about what a first minute's cold create path needed to compile. */
  static final int ENGINE_RUNS = 200;
  /** A run not answered within this ends the engine part (the engine is away). */
  static final Duration ENGINE_CALL_BOUND = Duration.ofSeconds(5);
  /**
   * The first run of each client loads the path it warms (classes, the queue's first poll): on a
   * loaded machine that alone took past 5 s, so it gets this long.
   */
  static final Duration FIRST_CALL_BOUND = Duration.ofSeconds(30);

  /** Replays of recorded order histories: enough for the JIT to compile the workflow's code. */
  static final int REPLAYS = 300;

  /** One run with no effect through the engine, numbered {@code n}; throws when it was not answered. */
  @FunctionalInterface
  interface EngineCall {
    void call(int n) throws Exception;
  }

  private final Duration duration;
  private final TokenService tokens;
  private final Skus skus;
  private final EngineCall engine;
  private final Runnable afterwards;
  /** One replay of a recorded order history, numbered {@code n}; throws what the replay threw. */
  @FunctionalInterface
  interface Replay {
    void replay(int n) throws Exception;
  }

  private Replay replay;
  private volatile String state = "not started";
  private volatile boolean done;

  /** engine: null, the engine path is not warmed (the sold-out path only). */
  WarmUp(Duration duration, TokenService tokens, Skus skus, EngineCall engine) {
    this(duration, tokens, skus, engine, () -> { });
  }

  /** afterwards: run once the warm-up ended, whatever it did (the warm-up worker stops polling). */
  WarmUp(Duration duration, TokenService tokens, Skus skus, EngineCall engine, Runnable afterwards) {
    this.duration = duration;
    this.tokens = tokens;
    this.skus = skus;
    this.engine = engine;
    this.afterwards = afterwards;
  }

  /**
   * Also replays, numbered {@code n}, of the order workflow's recorded histories (in this process,
   * no effect) after the engine runs; set before {@link #run}.
   */
  WarmUp replaying(Replay replay) {
    this.replay = replay;
    return this;
  }

  /** What the warm-up did (or is doing); the banner shows it. */
  String state() {
    return state;
  }

  /** Unhealthy until the warm-up has ended (or was off). */
  HealthCheck check() {
    return new HealthCheck() {
      @Override
      protected Result check() {
        return done ? Result.healthy(state) : Result.unhealthy("warming up: " + state);
      }
    };
  }

  /**
   * Runs it against {@code server}'s API connector (the port it bound, plain HTTP); a warm-up that
   * cannot run is logged and the instance comes up cold.
   */
  void run(org.eclipse.jetty.server.Server server) {
    try {
      if (duration.isZero()) {
        state = "off (warmUp.duration 0s)";
        return;
      }
      URI orders = apiOrders(server);
      if (orders == null) {
        state = "skipped: no plain-HTTP application connector to send to";
        log.warn("warm-up {}", state);
        return;
      }
      state = "running for " + duration;
      String engineFigures = engine == null ? null : engineRuns();
      String replayFigures = replay == null ? null : replays();
      state = send(orders) + (engineFigures == null ? "" : "; " + engineFigures)
          + (replayFigures == null ? "" : "; " + replayFigures);
      log.info("warm-up: {}", state);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      state = "interrupted";
    } catch (RuntimeException e) {
      state = "could not run: " + e;
      log.warn("warm-up could not run; the instance starts cold: {}", e.toString());
    } finally {
      try {
        afterwards.run();
      } catch (RuntimeException e) {
        log.warn("warm-up: could not end its worker's polling: {}", e.toString());
      }
      done = true;
    }
  }

  /** POST /orders on the application connector's bound port (loopback when it binds every address), or null. */
  static URI apiOrders(org.eclipse.jetty.server.Server server) {
    for (org.eclipse.jetty.server.Connector c : server.getConnectors()) {
      if (!(c instanceof org.eclipse.jetty.server.ServerConnector sc) || !"application".equals(sc.getName())) continue;
      if (sc.getConnectionFactory(org.eclipse.jetty.server.SslConnectionFactory.class) != null) return null;
      String host = sc.getHost() == null || sc.getHost().isBlank() || "0.0.0.0".equals(sc.getHost()) ? "127.0.0.1" : sc.getHost();
      return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + sc.getLocalPort() + "/orders");
    }
    return null;
  }

  /**
   * Up to {@link #ENGINE_RUNS} runs, {@link #CLIENTS} at a time, for at most {@code duration}; the
   * first failure, or a run not answered within {@link #ENGINE_CALL_BOUND} ({@link
   * #FIRST_CALL_BOUND} for a client's first), ends this part (a watchdog here reads each client's
   * call start), and the instance still comes up.
   */
  String engineRuns() throws InterruptedException {
    java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicInteger answered = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.atomic.AtomicReference<String> stopped = new java.util.concurrent.atomic.AtomicReference<>();
    // per client: when its call in flight started (nanoTime), 0 when it has none
    java.util.concurrent.atomic.AtomicLongArray callStarted = new java.util.concurrent.atomic.AtomicLongArray(CLIENTS);
    // per client: whether its first call was answered (the first is bounded by FIRST_CALL_BOUND)
    java.util.concurrent.atomic.AtomicIntegerArray warmed = new java.util.concurrent.atomic.AtomicIntegerArray(CLIENTS);
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    List<Thread> clients = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int client = c;
      Thread t = new Thread(() -> {
        try (io.opentelemetry.context.Scope ignored = unsampled().makeCurrent()) {
          for (int n = next.getAndIncrement(); n < ENGINE_RUNS && stopped.get() == null && System.nanoTime() < end;
              n = next.getAndIncrement()) {
            callStarted.set(client, System.nanoTime());
            try {
              engine.call(n);
              answered.incrementAndGet();
              warmed.set(client, 1);
            } catch (InterruptedException e) {
              return;
            } catch (Exception | Error e) { // an Error too: the part says it stopped, not "N runs"
              stopped.compareAndSet(null, "run " + n + ": " + e);
            } finally {
              callStarted.set(client, 0);
            }
          }
        }
      }, "warm-up-engine-" + c);
      t.setDaemon(true); // a call given up on here ends with the SDK's own deadline, not this instance's start
      t.start();
      clients.add(t);
    }
    while (clients.stream().anyMatch(Thread::isAlive) && stopped.get() == null) {
      Thread.sleep(20);
      long now = System.nanoTime();
      for (int c = 0; c < CLIENTS; c++) {
        long began = callStarted.get(c);
        Duration bound = warmed.get(c) == 1 ? ENGINE_CALL_BOUND : FIRST_CALL_BOUND;
        if (began != 0 && now - began > bound.toNanos()) {
          stopped.compareAndSet(null, "a run was not answered within " + bound);
        }
      }
    }
    if (stopped.get() != null) clients.forEach(Thread::interrupt);
    return partEnded("engine", String.format("%d runs with no effect through the engine in %.1f s", answered.get(),
        (System.nanoTime() - start) / 1e9), stopped.get());
  }

  /**
   * Up to {@link #REPLAYS} replays on this thread, for at most {@code duration}; the first that
   * throws ends the part (a replay asks nothing of the engine, so it needs no watchdog).
   */
  String replays() {
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    int done = 0;
    String stopped = null;
    for (int n = 0; n < REPLAYS && System.nanoTime() < end; n++) {
      try {
        replay.replay(n);
        done++;
      } catch (Exception | Error e) {
        if (e instanceof VirtualMachineError vme && !(e instanceof StackOverflowError)) throw vme;
        stopped = "replay " + n + ": " + e;
        break;
      }
    }
    return partEnded("replay", String.format("%d order histories replayed in %.1f s", done,
        (System.nanoTime() - start) / 1e9), stopped);
  }

  /** A part's figures for the banner; a part that ended early says why, and the log says it too. */
  private static String partEnded(String part, String figures, String stopped) {
    if (stopped == null) return figures;
    log.warn("warm-up: the {} part stopped after {}: {}", part, figures, stopped);
    return figures + " (stopped: " + stopped + ")";
  }

  /** The engine client's spans get a parent that is not sampled: none is recorded. */
  private static io.opentelemetry.context.Context unsampled() {
    return io.opentelemetry.context.Context.root().with(io.opentelemetry.api.trace.Span.wrap(
        io.opentelemetry.api.trace.SpanContext.create(UNSAMPLED_TRACE, UNSAMPLED_SPAN,
            io.opentelemetry.api.trace.TraceFlags.getDefault(), io.opentelemetry.api.trace.TraceState.getDefault())));
  }

  /**
   * Sets the warm-up SKU's stock to 0: null when it has none, else why its creates would order
   * (units held by orders made on it).
   */
  static String withoutStock(Skus skus) {
    Skus.Upsert made = skus.upsert(TENANT, SKU, 0, 1L, 1);
    return made.remaining() == 0 ? null : TENANT + "/" + SKU + " has stock (" + made + "), so its creates would order";
  }

  private String send(URI orders) throws InterruptedException {
    String hasStock = withoutStock(skus);
    if (hasStock != null) return "skipped: " + hasStock;
    List<String> bearer = new ArrayList<>(BUYERS);
    for (int i = 0; i < BUYERS; i++) bearer.add("Bearer " + tokens.issue(TENANT, "warm-up-" + i));
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(2)).build();
    Map<String, AtomicLong> answers = new ConcurrentHashMap<>();
    AtomicLong sent = new AtomicLong();
    java.util.concurrent.atomic.AtomicInteger notSoldOutInARow = new java.util.concurrent.atomic.AtomicInteger();
    long start = System.nanoTime();
    long end = start + duration.toNanos();
    List<Thread> clients = new ArrayList<>();
    for (int c = 0; c < CLIENTS; c++) {
      int client = c;
      Thread t = new Thread(() -> {
        for (long n = client; System.nanoTime() < end && notSoldOutInARow.get() < GIVE_UP_AFTER; n += CLIENTS) {
          sent.incrementAndGet();
          HttpRequest request = HttpRequest.newBuilder(orders).timeout(Duration.ofSeconds(5))
              .header("Content-Type", "application/json")
              .header("Authorization", bearer.get((int) (n % BUYERS)))
              .header("traceparent", UNSAMPLED_PARENT)
              .POST(HttpRequest.BodyPublishers.ofString(
                  "{\"request_key\":\"warm-up-" + n + "\",\"sku\":\"" + SKU + "\",\"quantity\":1}"))
              .build();
          String answer;
          try {
            answer = String.valueOf(http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode());
          } catch (java.io.IOException e) {
            answer = e.getClass().getSimpleName();
          } catch (InterruptedException e) {
            return;
          }
          answers.computeIfAbsent(answer, k -> new AtomicLong()).incrementAndGet();
          if ("409".equals(answer)) notSoldOutInARow.set(0);
          else notSoldOutInARow.incrementAndGet();
        }
      }, "warm-up-" + c);
      t.setDaemon(true);
      t.start();
      clients.add(t);
    }
    for (Thread t : clients) t.join();
    Map<String, Long> counted = new TreeMap<>();
    answers.forEach((k, v) -> counted.put(k, v.get()));
    return partEnded("sold-out", String.format("%d sold-out creates from %d buyers in %.1f s, answers by status %s",
        sent.get(), BUYERS, (System.nanoTime() - start) / 1e9, counted),
        notSoldOutInARow.get() >= GIVE_UP_AFTER ? GIVE_UP_AFTER + " answers in a row were not 409 SOLD_OUT" : null);
  }
}
