package io.flashsale.tools.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;

/**
 * The crowd's client: every buyer's create is sent at its arrival time and answered asynchronously
 * (Jetty's non-blocking client), so 10 000 waiting buyers cost a few threads and their own
 * connections instead of a thread each, and the load JVM's CPU stays well below the service's. A
 * 503 is sent again, with the same key, after its Retry-After; so is a request whose connection
 * failed, after a second.
 */
public final class Crowd implements AutoCloseable {
  /** How one buyer ended: nanos from the first send to the final answer; retries = its 503s sent again. */
  public record Ended(int index, long firstSentNanos, String outcome, long nanos, int retries) {}

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Buyers per client: Jetty's connection pool looks for an idle connection by walking its entries,
   * so one pool of 10 000 busy connections made every send walk all of them (the crowd's arrivals
   * fell 36 s behind); a few hundred per client keep that walk short.
   */
  static final int BUYERS_PER_CLIENT = 256;

  /** Buyer i sends through clients[i % length]; they share one thread pool and one scheduler. */
  private final HttpClient[] clients;
  private final QueuedThreadPool threads = new QueuedThreadPool(200, 8, 60_000, -1, null, null);
  private final ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler("crowd-scheduler", true);
  private final ScheduledExecutorService retries = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "crowd-retry");
    t.setDaemon(true);
    return t;
  });
  /** Every 503 answer, the last one of a buyer whose deadline passed too. */
  private final AtomicLong unavailable = new AtomicLong();
  /** Requests sent again after their connection failed. */
  private final AtomicLong connectionRetries = new AtomicLong();

  /** Clients that may hold one connection per buyer waiting for an answer, up to {@code buyers}. */
  public Crowd(int buyers) throws Exception {
    threads.setName("crowd-client");
    threads.setDaemon(true);
    threads.start();
    scheduler.start();
    clients = new HttpClient[Math.max(1, (buyers + BUYERS_PER_CLIENT - 1) / BUYERS_PER_CLIENT)];
    for (int i = 0; i < clients.length; i++) {
      HttpClient http = new HttpClient();
      http.setExecutor(threads);
      http.setScheduler(scheduler);
      http.setMaxConnectionsPerDestination(BUYERS_PER_CLIENT);
      http.setMaxRequestsQueuedPerDestination(buyers);
      http.setConnectTimeout(5_000);
      http.setIdleTimeout(60_000);
      http.setFollowRedirects(false);
      http.start();
      clients[i] = http;
    }
  }

  public long unavailable() {
    return unavailable.get();
  }

  public long connectionRetries() {
    return connectionRetries.get();
  }

  /**
   * Buyer i (of {@code tokens.length}) first sends at t0 + i / perSecond; a request unanswered after
   * {@code requestTimeout} ends its buyer as a {@link ClosedLoop#CLIENT_TIMEOUT}; no 503 is retried
   * after {@code retryUntil} (nanoTime). Returns once every buyer ended.
   */
  public List<Ended> run(String url, String[] tokens, IntFunction<String> body, double perSecond,
      Duration requestTimeout, long retryUntil, long t0) throws InterruptedException {
    int n = tokens.length;
    ConcurrentLinkedQueue<Ended> ended = new ConcurrentLinkedQueue<>();
    CountDownLatch done = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      long due = t0 + (long) (i * 1e9 / perSecond);
      for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) LockSupport.parkNanos(wait);
      new Buyer(i, url, tokens[i], body.apply(i), requestTimeout, retryUntil, t0, ended, done).send();
    }
    // every buyer ends by its own deadlines; past them, the ones still open are the client's to report
    if (!done.await(retryUntil - System.nanoTime() + requestTimeout.toNanos() + 15_000_000_000L, TimeUnit.NANOSECONDS)) {
      throw new IllegalStateException(done.getCount() + " of the crowd's buyers never ended");
    }
    return new ArrayList<>(ended);
  }

  /** One buyer's tries: the same request until an answer other than a 503 (or its deadline). */
  private final class Buyer {
    private final int index;
    private final String url;
    private final String token;
    private final String json;
    private final Duration timeout;
    private final long retryUntil;
    private final long t0;
    private final ConcurrentLinkedQueue<Ended> ended;
    private final CountDownLatch done;
    private long first;
    private int tries;
    private int retriedUnavailable;

    Buyer(int index, String url, String token, String json, Duration timeout, long retryUntil, long t0,
        ConcurrentLinkedQueue<Ended> ended, CountDownLatch done) {
      this.index = index;
      this.url = url;
      this.token = token;
      this.json = json;
      this.timeout = timeout;
      this.retryUntil = retryUntil;
      this.t0 = t0;
      this.ended = ended;
      this.done = done;
    }

    void send() {
      if (tries++ == 0) first = System.nanoTime();
      clients[index % clients.length].POST(url)
          .headers(h -> h.put(HttpHeader.AUTHORIZATION, "Bearer " + token))
          .body(new StringRequestContent("application/json", json))
          .timeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
          .send(new BufferingResponseListener(64 * 1024) {
            @Override
            public void onComplete(Result result) {
              if (result.isFailed()) {
                String failure = ClosedLoop.failure(result.getFailure());
                // a connection that failed or was reset: the buyer's client sends the same key again,
                // which the create contract makes safe (a timeout is the server's, and stays one)
                if (failure.equals(ClosedLoop.CLIENT_IO_ERROR) && System.nanoTime() < retryUntil) {
                  connectionRetries.incrementAndGet();
                  retries.schedule(Buyer.this::resend, 1, TimeUnit.SECONDS);
                  return;
                }
                end(failure);
                return;
              }
              int status = result.getResponse().getStatus();
              if (status == 503) {
                unavailable.incrementAndGet();
                if (System.nanoTime() < retryUntil) {
                  retriedUnavailable++;
                  retries.schedule(Buyer.this::resend,
                      retryAfterSeconds(result.getResponse().getHeaders().get(HttpHeader.RETRY_AFTER)), TimeUnit.SECONDS);
                  return;
                }
              }
              end(outcome(status, getContentAsString()));
            }
          });
    }

    /** A scheduled try: one that cannot even be sent ends its buyer instead of leaving it open. */
    void resend() {
      try {
        send();
      } catch (RuntimeException e) {
        end(ClosedLoop.failure(e));
      }
    }

    private void end(String outcome) {
      ended.add(new Ended(index, first - t0, outcome, System.nanoTime() - first, retriedUnavailable));
      done.countDown();
    }
  }

  /** The answer's {@code outcome} field, or HTTP_&lt;status&gt; when it has none. */
  static String outcome(int status, String body) {
    try {
      JsonNode node = body == null || body.isBlank() ? null : JSON.readTree(body);
      String o = node == null ? null : node.path("outcome").asText(null);
      return o != null ? o : "HTTP_" + status;
    } catch (IOException notJson) {
      return "HTTP_" + status;
    }
  }

  /** Retry-After in seconds, within 0..10; a date form or garbage: one second, as most clients do. */
  static long retryAfterSeconds(String header) {
    try {
      return header == null ? 1 : Math.max(0, Math.min(10, Long.parseLong(header.trim())));
    } catch (NumberFormatException e) {
      return 1;
    }
  }

  @Override
  public void close() throws Exception {
    retries.shutdownNow();
    for (HttpClient http : clients) http.stop();
    scheduler.stop();
    threads.stop();
  }
}
