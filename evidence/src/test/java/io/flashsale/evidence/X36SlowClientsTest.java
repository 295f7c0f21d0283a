package io.flashsale.evidence;

import io.flashsale.launcher.cli.HttpJson;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * slow clients hold no request thread (docs/DESIGN.md §Slow clients). With the API's thread
 * pool cut to {@value #THREADS} threads and the production connector settings otherwise (the body
 * read in full without a thread, the idle timeout 30 s; {@code bodyReadDeadline} {@value #DEADLINE_S} s
 * here, not the 10 s default, so that a buyer served slowly on a loaded machine is still told apart
 * from one served only once the deadline freed the threads), more
 * unauthenticated connections than there are threads stay open on the payment callback: half
 * trickle a declared 10 000-byte body one byte every {@value #TRICKLE_MS} ms, half stop inside
 * their headers. While they are open a buyer logs in, creates and pays an order, each request
 * answered (the client waits at most {@value #BUYER_TIMEOUT_S} s; before this guard every thread
 * sat in a callback's body read and the buyer's requests timed out). After the deadline the
 * trickling connections are answered 408 REQUEST_TIMEOUT and closed; nothing was recorded from them.
 */
@Tag("engine-independent") // its claim is about the HTTP server's threads, the same on either engine
class X36SlowClientsTest {
  private static final int THREADS = 16;
  private static final int TRICKLING = 40;
  private static final int STALLED = 40;
  private static final long TRICKLE_MS = 1_000;
  /** The slow bodies' deadline: below the connector's 30 s idle timeout. */
  private static final int DEADLINE_S = 20;
  /** Below the deadline: were the slow bodies holding every thread, the buyer's requests would time out. */
  private static final int BUYER_TIMEOUT_S = 18;

  @RegisterExtension static final Stack stack = new Stack().with("server.maxThreads", THREADS)
      .with("server.minThreads", THREADS).with("bodyReadDeadline", DEADLINE_S + "s");
  @RegisterExtension static final Evidence ev = new Evidence("X-36",
      "slow clients hold no thread: " + (TRICKLING + STALLED) + " slow callback connections against " + THREADS
          + " threads, a buyer answered meanwhile, trickling bodies ended with 408 at the deadline");

  @Test
  void slowClientsHoldNoThread() throws Exception {
    stack.sku("sku-x36", 10, 10);
    AtomicBoolean trickle = new AtomicBoolean(true);
    List<Socket> trickling = new ArrayList<>();
    List<Socket> stalled = new ArrayList<>();
    ExecutorService trickler = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < TRICKLING; i++) {
        Socket s = open();
        write(s, "POST /callbacks/payment HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "X-Channel-Signature: t=" + System.currentTimeMillis() / 1000 + ",v1=" + "0".repeat(64) + "\r\n"
            + "Content-Length: 10000\r\n\r\n{");
        trickling.add(s);
      }
      for (int i = 0; i < STALLED; i++) {
        Socket s = open();
        write(s, "POST /callbacks/payment HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty");
        stalled.add(s);
      }
      long opened = System.nanoTime();
      trickler.submit(() -> {
        while (trickle.get()) {
          for (Socket s : trickling) {
            try {
              write(s, " ");
            } catch (IOException closedByTheServer) {
              // answered and closed: nothing more to send
            }
          }
          try {
            Thread.sleep(TRICKLE_MS);
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      Thread.sleep(TRICKLE_MS + 200); // every slow connection has been accepted and has sent a byte of its body

      HttpJson api = new HttpJson("http://127.0.0.1:" + stack.wiring.apiPort(), null,
          java.time.Duration.ofSeconds(BUYER_TIMEOUT_S));
      long t = System.nanoTime();
      HttpJson buyer = api.login("t1", "user-3601");
      HttpJson.Reply created = Buyers.create(buyer, "x36-a", "sku-x36", 1);
      // the login's and the create's bodies needed a request thread: were the slow bodies holding every
      // one, these two would be served only once the deadline (DEADLINE_S after they opened) freed them
      long answered = System.nanoTime();
      HttpJson.Reply paid = Buyers.pay(buyer, created.text("order_id"));
      double seconds = (System.nanoTime() - t) / 1e9;
      ev.equal(201, created.status(), "a buyer's create is answered while " + (TRICKLING + STALLED)
          + " slow connections are open against " + THREADS + " threads");
      ev.check(paid.status() / 100 == 2, "and the pay (" + paid.status() + " " + paid.text("status") + ")");
      double sinceOpened = (answered - opened) / 1e9;
      ev.check(sinceOpened < DEADLINE_S - 1, String.format("the buyer's login and create were served before any slow"
          + " body's deadline (%.1f s after they opened, the first deadline at %d s)", sinceOpened, DEADLINE_S));
      ev.note(String.format("login, create and pay answered in %.2f s with %d trickling bodies and %d stalled headers open",
          seconds, TRICKLING, STALLED));

      // the deadline (DEADLINE_S from each request's start): every trickling connection answered 408 and closed
      Map<String, Integer> answers = new TreeMap<>();
      for (Socket s : trickling) answers.merge(statusLine(s), 1, Integer::sum);
      double after = (System.nanoTime() - opened) / 1e9;
      ev.note(String.format("trickling connections answered %s, %.1f s after they opened", answers, after));
      ev.equal(Map.of("HTTP/1.1 408 Request Timeout", TRICKLING), answers,
          "every trickling body was refused at the deadline (408), not read for ever");
      // the only callbacks recorded are the channel's own, for the buyer's order
      ev.equal(0L, stack.sql.count("SELECT count(*) FROM payment_notification WHERE merchant_order <> ?",
          created.text("order_id")), "nothing was recorded from the slow connections");
    } finally {
      trickle.set(false);
      trickler.shutdownNow();
      for (Socket s : trickling) s.close();
      for (Socket s : stalled) s.close();
    }
  }

  private static Socket open() throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", stack.wiring.apiPort()), 5_000);
    s.setSoTimeout(2 * DEADLINE_S * 1_000);
    return s;
  }

  private static void write(Socket s, String text) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(text.getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  /** The first line of the server's answer, or what happened instead. */
  private static String statusLine(Socket s) {
    try {
      InputStream in = s.getInputStream();
      StringBuilder line = new StringBuilder();
      int c;
      while ((c = in.read()) != -1 && c != '\r' && c != '\n') line.append((char) c);
      return line.length() == 0 ? "closed without an answer" : line.toString();
    } catch (java.net.SocketTimeoutException e) {
      return "no answer within 20 s";
    } catch (IOException e) {
      return "closed: " + e.getClass().getSimpleName();
    }
  }

}
