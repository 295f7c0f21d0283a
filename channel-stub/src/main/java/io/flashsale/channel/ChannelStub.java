package io.flashsale.channel;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fake payment channel over HTTP with fault injection. Start it in-process with {@link #start} or alone with
 * {@code main --port 8090 --host 127.0.0.1 [--secret X] [--ledger FILE]}. With a ledger file, what the "bank" knows
 * (orders, refunds, statement rows, id counters) survives a restart; fault rules, stats and callbacks not yet
 * delivered do not.
 */
public final class ChannelStub implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ChannelStub.class);

  private final HttpServer server;
  private final ExecutorService requestThreads;
  private final CallbackSender callbacks;
  private final Ledger ledger;
  private final String host;
  private final int port;

  private ChannelStub(HttpServer server, ExecutorService requestThreads, CallbackSender callbacks, Ledger ledger,
      String host) {
    this.server = server;
    this.port = server.getAddress().getPort();
    this.requestThreads = requestThreads;
    this.callbacks = callbacks;
    this.ledger = ledger;
    this.host = host;
  }

  /**
   * Starts the stub with a memory-only ledger.
   *
   * @param host address to bind, e.g. "127.0.0.1"
   * @param port port to bind, 0 for any free port
   * @param callbackSecret HMAC secret for the X-Channel-Signature header of callbacks; null sends no signature
   */
  public static ChannelStub start(String host, int port, String callbackSecret) {
    return start(host, port, callbackSecret, null);
  }

  /**
   * Starts the stub.
   *
   * @param host address to bind, e.g. "127.0.0.1"
   * @param port port to bind, 0 for any free port
   * @param callbackSecret HMAC secret for the X-Channel-Signature header of callbacks; null sends no signature
   * @param ledgerFile file that keeps the ledger across restarts (created if missing, replayed if present, locked
   *     while the stub runs); null keeps the ledger in memory only
   * @throws UncheckedIOException if the port cannot be bound or the file cannot be read or written
   * @throws IllegalStateException if the file is damaged (beyond a torn last line) or another stub holds it
   */
  public static ChannelStub start(String host, int port, String callbackSecret, Path ledgerFile) {
    return start(host, port, callbackSecret, ledgerFile, false);
  }

  /**
   * With the test surface: {@code POST /_callbacks/send} signs and sends any callback it is given.
   * Never in a running service: it would let any local process forge a signed CHARGED notice.
   */
  public static ChannelStub startWithTestSurface(String host, int port, String callbackSecret) {
    return start(host, port, callbackSecret, null, true);
  }

  private static ChannelStub start(String host, int port, String callbackSecret, Path ledgerFile,
      boolean testSurface) {
    FaultRules rules = new FaultRules();
    Stats stats = new Stats();
    CallbackSender callbacks = new CallbackSender(callbackSecret, rules, stats);
    Ledger ledger;
    try {
      ledger = new Ledger(callbacks, ledgerFile);
    } catch (RuntimeException e) {
      callbacks.stop();
      throw e;
    }
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 256);
    } catch (IOException e) {
      ledger.close();
      callbacks.stop();
      throw new UncheckedIOException("cannot bind channel stub to " + host + ":" + port, e);
    }
    // Requests may be held or delayed for seconds: a cached pool never makes one request wait for another.
    AtomicInteger n = new AtomicInteger();
    ExecutorService threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "channel-http-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    server.createContext("/", new ChannelHandler(ledger, rules, callbacks, stats, testSurface));
    server.setExecutor(threads);
    server.start();
    ChannelStub stub = new ChannelStub(server, threads, callbacks, ledger, host);
    log.info("channel stub listening on {} (callback signatures {}, ledger {})", stub.baseUrl(),
        callbackSecret == null ? "off" : "on", ledgerFile == null ? "in memory" : "in " + ledgerFile);
    return stub;
  }

  /** Starts on 127.0.0.1 with a free port. */
  public static ChannelStub start(String callbackSecret) {
    return start("127.0.0.1", 0, callbackSecret);
  }

  public int port() {
    return port;
  }

  /** e.g. {@code http://127.0.0.1:8090} (no trailing slash). */
  public String baseUrl() {
    String h = host.contains(":") ? "[" + host + "]" : host;
    if (h.equals("0.0.0.0")) {
      h = "127.0.0.1";
    }
    return "http://" + h + ":" + port();
  }

  public void stop() {
    server.stop(0);
    // Before request threads are interrupted: waits for a ledger write in progress, which an interrupt would tear.
    ledger.close();
    callbacks.stop();
    requestThreads.shutdownNow();
    try {
      requestThreads.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    log.info("channel stub on port {} stopped", port());
  }

  @Override
  public void close() {
    stop();
  }

  public static void main(String[] args) throws InterruptedException {
    String host = "127.0.0.1";
    int port = 8090;
    String secret = null;
    Path ledgerFile = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        usage("missing value for " + a);
      }
      switch (a) {
        case "--port" -> port = Integer.parseInt(args[++i]);
        case "--host" -> host = args[++i];
        case "--secret" -> secret = args[++i];
        case "--ledger" -> ledgerFile = Path.of(args[++i]);
        default -> usage("unknown option " + a);
      }
    }
    ChannelStub stub = start(host, port, secret, ledgerFile);
    System.out.println("channel stub listening on " + stub.baseUrl());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stub.stop();
      stopped.countDown();
    }));
    stopped.await();
  }

  private static void usage(String problem) {
    System.err.println(problem);
    System.err.println("usage: ChannelStub [--port 8090] [--host 127.0.0.1] [--secret X] [--ledger FILE]");
    System.exit(2);
  }
}
