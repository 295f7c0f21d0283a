package io.flashsale.channel;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fake payment channel over HTTP with fault injection. Start it in-process with {@link #start} or alone with
 * {@link #main}. Like a provider, it answers merchant calls only with the merchant's key and calls back
 * only the notify URLs it was configured with; its fault endpoints are a lab feature. With a ledger file, what the "bank" knows
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
   * How a stub runs. It behaves like a payment provider's merchant API, not like a signing service:
   *
   * @param host address to bind, e.g. "127.0.0.1"
   * @param port port to bind, 0 for any free port
   * @param merchantKey the merchant's credential: every merchant call (charge, query, close,
   *     refund, statement) must carry {@code Authorization: Bearer <merchantKey>}; required, and
   *     not the callback secret
   * @param callbackSecret HMAC secret for the X-Channel-Signature header of callbacks; null sends no signature
   * @param notifyUrls the only callback URLs a charge may name (the merchant's configured ones):
   *     a charge naming another is refused 422 NOTIFY_URL_NOT_ALLOWED and never called back
   * @param lab the fault, release, reset and stats endpoints; null = on exactly when bound to a
   *     loopback address (the local default), so a stub reachable from elsewhere has none unless
   *     asked for explicitly
   * @param ledgerFile file that keeps the ledger across restarts (created if missing, replayed if
   *     present, locked while the stub runs); null keeps the ledger in memory only
   */
  public record Settings(String host, int port, String merchantKey, String callbackSecret, Set<String> notifyUrls,
      Boolean lab, Path ledgerFile) {
    public Settings {
      if (merchantKey == null || merchantKey.isBlank()) {
        throw new IllegalArgumentException("the channel stub needs a merchant key (its merchant API is not open)");
      }
      if (merchantKey.equals(callbackSecret)) {
        throw new IllegalArgumentException("the merchant key must not be the callback secret");
      }
      if (notifyUrls == null || notifyUrls.isEmpty()) {
        throw new IllegalArgumentException("the channel stub needs the notify URLs it may call back");
      }
      notifyUrls = Set.copyOf(notifyUrls);
      callbackSecret = callbackSecret == null || callbackSecret.isBlank() ? null : callbackSecret;
    }

    /** On loopback, a free port, the lab on, the ledger in memory. */
    public static Settings local(String merchantKey, String callbackSecret, Set<String> notifyUrls) {
      return new Settings("127.0.0.1", 0, merchantKey, callbackSecret, notifyUrls, null, null);
    }

    public Settings withLedger(Path file) {
      return new Settings(host, port, merchantKey, callbackSecret, notifyUrls, lab, file);
    }

    public Settings withLab(Boolean on) {
      return new Settings(host, port, merchantKey, callbackSecret, notifyUrls, on, ledgerFile);
    }

    public Settings on(String bindHost, int bindPort) {
      return new Settings(bindHost, bindPort, merchantKey, callbackSecret, notifyUrls, lab, ledgerFile);
    }

    /** Whether the lab endpoints are served: as asked, else only on a loopback address. */
    boolean labOn() {
      return lab != null ? lab : loopback();
    }

    boolean loopback() {
      try {
        return InetAddress.getByName(host).isLoopbackAddress();
      } catch (UnknownHostException e) {
        return false;
      }
    }
  }

  /**
   * Starts the stub.
   *
   * @throws UncheckedIOException if the port cannot be bound or the file cannot be read or written
   * @throws IllegalStateException if the file is damaged (beyond a torn last line) or another stub holds it
   */
  public static ChannelStub start(Settings settings) {
    return start(settings, false);
  }

  /**
   * With the test surface: {@code POST /_callbacks/send} signs and sends any callback it is given.
   * Never in a running service: it would let any local process forge a signed CHARGED notice.
   */
  public static ChannelStub startWithTestSurface(Settings settings) {
    return start(settings, true);
  }

  private static ChannelStub start(Settings settings, boolean testSurface) {
    String host = settings.host();
    FaultRules rules = new FaultRules();
    Stats stats = new Stats();
    CallbackSender callbacks = new CallbackSender(settings.callbackSecret(), rules, stats);
    Ledger ledger;
    try {
      ledger = new Ledger(callbacks, settings.ledgerFile());
    } catch (RuntimeException e) {
      callbacks.stop();
      throw e;
    }
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(host, settings.port()), 256);
    } catch (IOException e) {
      ledger.close();
      callbacks.stop();
      throw new UncheckedIOException("cannot bind channel stub to " + host + ":" + settings.port(), e);
    }
    // Requests may be held or delayed for seconds: a cached pool never makes one request wait for another.
    AtomicInteger n = new AtomicInteger();
    ExecutorService threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "channel-http-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    boolean lab = settings.labOn();
    server.createContext("/", new ChannelHandler(ledger, rules, callbacks, stats,
        new ChannelHandler.Access(settings.merchantKey(), settings.notifyUrls(), lab, testSurface && lab,
            settings.loopback())));
    server.setExecutor(threads);
    server.start();
    ChannelStub stub = new ChannelStub(server, threads, callbacks, ledger, host);
    log.info("channel stub listening on {} (merchant key required, callbacks only to {}, callback signatures {},"
        + " lab endpoints {}, ledger {})", stub.baseUrl(), settings.notifyUrls(),
        settings.callbackSecret() == null ? "off" : "on", lab ? "on" : "off",
        settings.ledgerFile() == null ? "in memory" : "in " + settings.ledgerFile());
    return stub;
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

  /**
   * {@code main --port 8090 --host 127.0.0.1 --notify-url URL [--notify-url URL ...] [--ledger FILE] [--lab on|off]};
   * the merchant key and the callback secret come from the environment
   * ({@value #MERCHANT_KEY_ENV}, {@value #CALLBACK_SECRET_ENV}), never from the command line.
   */
  public static void main(String[] args) throws InterruptedException {
    String host = "127.0.0.1";
    int port = 8090;
    Path ledgerFile = null;
    Boolean lab = null;
    java.util.Set<String> notifyUrls = new java.util.LinkedHashSet<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        usage("missing value for " + a);
      }
      switch (a) {
        case "--port" -> port = Integer.parseInt(args[++i]);
        case "--host" -> host = args[++i];
        case "--ledger" -> ledgerFile = Path.of(args[++i]);
        case "--notify-url" -> notifyUrls.add(args[++i]);
        case "--lab" -> lab = switch (args[++i]) {
          case "on" -> true;
          case "off" -> false;
          default -> {
            usage("--lab takes on or off");
            yield null;
          }
        };
        default -> usage("unknown option " + a);
      }
    }
    ChannelStub stub = start(new Settings(host, port, System.getenv(MERCHANT_KEY_ENV), System.getenv(CALLBACK_SECRET_ENV),
        notifyUrls, lab, ledgerFile));
    System.out.println("channel stub listening on " + stub.baseUrl());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      stub.stop();
      stopped.countDown();
    }));
    stopped.await();
  }

  /** The environment variable that holds the merchant key of a stub of its own. */
  public static final String MERCHANT_KEY_ENV = "FLASHSALE_CHANNEL_MERCHANT_KEY";
  /** The environment variable that holds the callback secret of a stub of its own. */
  public static final String CALLBACK_SECRET_ENV = "FLASHSALE_CALLBACK_SECRET";

  private static void usage(String problem) {
    System.err.println(problem);
    System.err.println("usage: ChannelStub [--port 8090] [--host 127.0.0.1] --notify-url URL... [--ledger FILE]"
        + " [--lab on|off]; " + MERCHANT_KEY_ENV + " and " + CALLBACK_SECRET_ENV + " from the environment");
    System.exit(2);
  }
}
