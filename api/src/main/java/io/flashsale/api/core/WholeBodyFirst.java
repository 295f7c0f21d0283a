package io.flashsale.api.core;

import io.flashsale.problem.Problem;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * No request reaches a thread of the application before its whole body is in memory
 * (docs/DESIGN.md §Slow clients). The body is read without a thread (Jetty calls back as bytes
 * arrive), at most {@code maxBytes} (else 413 BODY_TOO_LARGE) and within {@code deadline} of the
 * request's start (else 408 REQUEST_TIMEOUT), both as problem details with {@code Connection:
 * close}. A client that trickles its body, or declares a length and sends nothing, holds a socket
 * for at most the deadline and never a request thread: callbacks with bad signatures, buyers and
 * unauthenticated requests alike are read this way before anything checks them. Requests without a
 * body pass straight on; stalled headers hold no thread either (Jetty parses them as they come) and
 * end with the connector's idle timeout.
 */
public final class WholeBodyFirst extends Handler.Wrapper {
  public static final String TIMEOUT_CODE = "REQUEST_TIMEOUT";

  private final String connector;
  private final long maxBytes;
  private final Duration deadline;

  /** @param connector the name of the connectors it guards (null: all) */
  public WholeBodyFirst(Handler next, String connector, long maxBytes, Duration deadline) {
    super(next);
    this.connector = connector;
    if (maxBytes < 1) throw new IllegalArgumentException("maxBytes must be positive, not " + maxBytes);
    if (deadline.isNegative() || deadline.isZero()) throw new IllegalArgumentException("deadline must be positive");
    this.maxBytes = maxBytes;
    this.deadline = deadline;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    if (connector != null && !connector.equals(request.getConnectionMetaData().getConnector().getName())) {
      return super.handle(request, response, callback);
    }
    long length = request.getLength();
    boolean chunked = request.getHeaders().contains(HttpHeader.TRANSFER_ENCODING);
    if (length == 0 || (length < 0 && !chunked)) return super.handle(request, response, callback);
    if (length > maxBytes) {
      refuse(response, callback, tooLarge());
      return true;
    }
    new Reading(request, response, callback).start();
    return true;
  }

  /** One request's body being read; exactly one of completion, refusal or timeout settles it. */
  private final class Reading implements Runnable {
    private final Request request;
    private final Response response;
    private final Callback callback;
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private final AtomicBoolean settled = new AtomicBoolean();
    private Scheduler.Task timeout;

    Reading(Request request, Response response, Callback callback) {
      this.request = request;
      this.response = response;
      this.callback = callback;
    }

    void start() {
      long startNanos = request.getBeginNanoTime();
      long leftMs = Math.max(1, deadline.toMillis() - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
      timeout = request.getComponents().getScheduler().schedule(this::timedOut, leftMs, TimeUnit.MILLISECONDS);
      run();
    }

    /** Reads what has arrived; asks to be called again when more does. */
    @Override
    public void run() {
      while (true) {
        if (settled.get()) return;
        Content.Chunk chunk;
        try {
          chunk = request.read();
          if (chunk == null) {
            request.demand(this);
            return;
          }
        } catch (IllegalStateException answered) {
          return; // the deadline answered the request meanwhile
        }
        if (settled.get()) {
          chunk.release();
          return;
        }
        if (Content.Chunk.isFailure(chunk)) {
          chunk.release();
          if (settle()) callback.failed(chunk.getFailure());
          return;
        }
        ByteBuffer bytes = chunk.getByteBuffer();
        boolean last = chunk.isLast();
        if (body.size() + bytes.remaining() > maxBytes) {
          chunk.release();
          if (settle()) {
            refuse(response, callback, tooLarge());
          }
          return;
        }
        byte[] copy = new byte[bytes.remaining()];
        bytes.get(copy);
        body.write(copy, 0, copy.length);
        chunk.release();
        if (last) {
          if (settle()) dispatch();
          return;
        }
      }
    }

    private void timedOut() {
      if (!settle()) return;
      refuse(response, callback, Problem.of(408, TIMEOUT_CODE,
          "the request body did not arrive within " + deadline.toMillis() + " ms"));
    }

    private boolean settle() {
      if (!settled.compareAndSet(false, true)) return false;
      if (timeout != null) timeout.cancel();
      return true;
    }

    private void dispatch() {
      Request whole = new WholeBody(request, body.toByteArray());
      try {
        if (!WholeBodyFirst.super.handle(whole, response, callback)) Response.writeError(whole, response, callback, 404);
      } catch (Throwable x) {
        callback.failed(x);
      }
    }
  }

  /** The request with its body already read: one last chunk, then the end. */
  private static final class WholeBody extends Request.Wrapper {
    private byte[] left;

    WholeBody(Request request, byte[] body) {
      super(request);
      this.left = body;
    }

    @Override
    public Content.Chunk read() {
      byte[] b = left;
      if (b == null) return Content.Chunk.EOF;
      left = null;
      return Content.Chunk.from(ByteBuffer.wrap(b), true);
    }

    @Override
    public void demand(Runnable demandCallback) {
      demandCallback.run(); // everything is here already
    }

    @Override
    public boolean consumeAvailable() {
      left = null;
      return true;
    }
  }

  private Problem tooLarge() {
    return Problem.of(413, BodyLimit.CODE, "the request body is larger than " + maxBytes + " bytes");
  }

  private static void refuse(Response response, Callback callback, Problem problem) {
    response.setStatus(problem.status());
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, Problem.MEDIA_TYPE);
    response.getHeaders().put(HttpHeader.CONNECTION, "close"); // the rest of the body is not read
    response.write(true, ByteBuffer.wrap(problem.toJson()), callback);
  }
}
