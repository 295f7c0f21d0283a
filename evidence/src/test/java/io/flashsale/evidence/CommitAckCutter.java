package io.flashsale.evidence;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy between a service's connection pool and PostgreSQL that loses one commit's
 * acknowledgement: it relays everything, and once armed with an order id it watches each
 * connection's transaction (the bytes the client sent since the connection was last idle); when
 * PostgreSQL answers COMMIT to a transaction that carried the order id and an ORDER_PAID event
 * (the success transaction), it drops that answer and cuts the connection, client and server side.
 * The transaction is committed; the client sees an I/O error instead of the acknowledgement. The
 * order id and event type are bind parameters, so they are on the wire however the driver caches
 * its statements; the COMMIT is recognized by PostgreSQL's CommandComplete tag.
 */
final class CommitAckCutter implements AutoCloseable {
  private final ServerSocket server;
  private final int targetPort;
  private volatile String armedFor;
  private final AtomicInteger cuts = new AtomicInteger();
  private final AtomicInteger connections = new AtomicInteger();
  private final Thread acceptor;

  CommitAckCutter(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
    this.acceptor = new Thread(this::accept, "commit-ack-cutter");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** The next success transaction of this order loses its COMMIT acknowledgement (once). */
  void arm(String orderId) {
    armedFor = orderId;
  }

  /** Acknowledgements cut so far. */
  int cuts() {
    return cuts.get();
  }

  int connections() {
    return connections.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket pg = new Socket(InetAddress.getByName("127.0.0.1"), targetPort);
        client.setTcpNoDelay(true);
        pg.setTcpNoDelay(true);
        connections.incrementAndGet();
        Link link = new Link(client, pg);
        start("cutter-up", link::up);
        start("cutter-down", link::down);
      } catch (IOException e) {
        if (server.isClosed()) return;
      }
    }
  }

  private static void start(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
  }

  /** One pooled connection: client → PostgreSQL (up) and back (down). */
  private final class Link {
    private final Socket client;
    private final Socket pg;
    /** What the client sent in the current transaction (Latin-1, so every byte is one char). */
    private final StringBuilder tx = new StringBuilder();

    Link(Socket client, Socket pg) {
      this.client = client;
      this.pg = pg;
    }

    void up() {
      byte[] buf = new byte[16_384];
      try (InputStream in = client.getInputStream(); OutputStream out = pg.getOutputStream()) {
        int n;
        while ((n = in.read(buf)) >= 0) {
          synchronized (tx) {
            tx.append(new String(buf, 0, n, StandardCharsets.ISO_8859_1));
            if (tx.length() > 1_000_000) tx.delete(0, tx.length() - 1_000_000);
          }
          out.write(buf, 0, n);
          out.flush();
        }
      } catch (IOException ended) {
        // either side closed
      } finally {
        closeBoth();
      }
    }

    void down() {
      byte[] buf = new byte[16_384];
      try (InputStream in = pg.getInputStream(); OutputStream out = client.getOutputStream()) {
        int n;
        while ((n = in.read(buf)) >= 0) {
          String reply = new String(buf, 0, n, StandardCharsets.ISO_8859_1);
          String order = armedFor;
          boolean cut = false;
          synchronized (tx) {
            if (order != null && reply.contains("COMMIT\0") && tx.indexOf(order) >= 0
                && tx.indexOf("ORDER_PAID") >= 0 && cuts.get() == 0) {
              cut = true;
            }
            // ReadyForQuery 'I': the connection is out of any transaction, the next one starts afresh
            if (reply.endsWith("Z\0\0\0\5I")) tx.setLength(0);
          }
          if (cut) {
            cuts.incrementAndGet();
            armedFor = null;
            return; // the committed transaction's acknowledgement is never relayed
          }
          out.write(buf, 0, n);
          out.flush();
        }
      } catch (IOException ended) {
        // either side closed
      } finally {
        closeBoth();
      }
    }

    private void closeBoth() {
      try {
        client.close();
      } catch (IOException ignored) {
        // closing anyway
      }
      try {
        pg.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
