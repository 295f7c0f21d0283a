package io.flashsale.api.core;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.Response;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/**
 * Request bodies past {@code maxBodySize} are refused with 413 BODY_TOO_LARGE before anything
 * reads them: at once when Content-Length says so (before authentication and resource matching),
 * and while reading when there is no length (chunked), the moment the count passes the limit. A
 * resource never sees a partial body, so nothing is stored.
 *
 * <p>A request answered before its body was read (401, 403 CSRF, 413 …) has the rest of its body
 * read and dropped before the answer goes out, up to {@link #DRAIN_LIMIT} bytes in all, so the
 * connection stays in step and open. Otherwise the container closes it the moment more of that body
 * arrives, with a reset, and a client still sending its body loses the answer (the JDK client
 * reports {@code http1_0 content, bytes received: n}: it had the whole answer, but not its end).
 * Reading the rest is bounded by time too ({@link #DRAIN_TIME}, checked between reads), so a sender
 * trickling its body holds a request thread for that long plus at most one read's idle timeout. A body past either bound, or one the client still holds
 * back with {@code Expect: 100-continue} (nothing read yet, so no 100 Continue was sent), is not
 * read: the answer says {@code Connection: close} (docs/DESIGN.md §API, "Requests on a kept-alive
 * connection").
 */
@PreMatching
@Priority(Priorities.AUTHENTICATION - 100)
public final class BodyLimit implements ContainerRequestFilter, ContainerResponseFilter {
  public static final String CODE = "BODY_TOO_LARGE";
  private static final String STREAM = BodyLimit.class.getName() + ".stream";
  /** How much of a refused request's body is read and dropped to keep its connection. */
  public static final long DRAIN_LIMIT = 1024 * 1024;
  /** How long reading and dropping a refused request's body may take before the connection is given up. */
  public static final Duration DRAIN_TIME = Duration.ofSeconds(3);

  private final long maxBytes;

  public BodyLimit(long maxBytes) {
    if (maxBytes < 1) throw new IllegalArgumentException("maxBodySize must be positive, not " + maxBytes);
    this.maxBytes = maxBytes;
  }

  @Override
  public void filter(ContainerRequestContext request) {
    String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
    boolean chunked = request.getHeaderString("Transfer-Encoding") != null;
    Counting counting = new Counting(request.getEntityStream(), maxBytes, declaredLength(length), chunked);
    // set before the 413, so the response filter can drop the body the 413 leaves unread
    request.setProperty(STREAM, counting);
    if (length != null && declaredTooLarge(length.trim())) throw tooLarge(maxBytes);
    request.setEntityStream(counting);
  }

  @Override
  public void filter(ContainerRequestContext request, ContainerResponseContext response) {
    // an accepted request's resource read its body; a refusal may not have
    if (response.getStatus() < 400) return;
    if (!(request.getProperty(STREAM) instanceof Counting body) || !body.hasBody() || body.fullyRead()) return;
    // the container sends 100 Continue on the first read; before it the client holds its body
    // back, and asking for it now would be reading it. After it, the client is sending: drain.
    boolean stillHeldBack = request.getHeaderString("Expect") != null && !body.readStarted();
    if (stillHeldBack || !body.drain(DRAIN_LIMIT, DRAIN_TIME)) response.getHeaders().putSingle("Connection", "close");
  }

  private static long declaredLength(String length) {
    if (length == null) return -1;
    try {
      return Long.parseLong(length.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private boolean declaredTooLarge(String length) {
    if (length.isEmpty()) return false;
    if (!length.chars().allMatch(Character::isDigit)) return false; // the container refuses it as 400
    // more digits than a long holds is too large too, not a parse failure
    return length.length() > 18 || Long.parseLong(length) > maxBytes;
  }

  /** 413 as JSON; the response filter drops the rest of the body or closes the connection. */
  static WebApplicationException tooLarge(long maxBytes) {
    return new WebApplicationException("request body too large",
        ApiError.response(413, CODE, "the request body is larger than " + maxBytes + " bytes"));
  }

  /** Counts what is read; past the limit the read fails with the 413 instead of returning data. */
  static final class Counting extends FilterInputStream {
    private final long max;
    /** Content-Length, or -1 when the body is chunked or has no length. */
    private final long declared;
    private final boolean chunked;
    private long count;
    private boolean ended;
    private boolean readStarted;

    Counting(InputStream in, long max, long declared, boolean chunked) {
      super(in);
      this.max = max;
      this.declared = declared;
      this.chunked = chunked;
    }

    boolean hasBody() {
      return declared > 0 || chunked;
    }

    /** Something asked for the body: the container has let a client waiting for 100 Continue send it. */
    boolean readStarted() {
      return readStarted;
    }

    @Override
    public int read() throws IOException {
      readStarted = true;
      int b = super.read();
      if (b >= 0) add(1);
      else ended = true;
      return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
      readStarted = true;
      int n = super.read(buf, off, len);
      if (n > 0) add(n);
      else if (n < 0) ended = true;
      return n;
    }

    /** Nothing left on the connection: the end was seen, or as many bytes as declared were read. */
    boolean fullyRead() {
      return ended || declared == 0 || (declared > 0 && count >= declared);
    }

    /**
     * Reads and drops the rest of the body, past the count limit (no 413 any more: the answer is
     * decided), until {@code limit} bytes of it have been seen or {@code time} has passed; true
     * when nothing of it is left on the connection. The time is checked between reads: a read
     * begun before it ends may still wait up to the connector's idle timeout.
     */
    boolean drain(long limit, Duration time) {
      if (declared > limit) return false;
      long deadline = System.nanoTime() + time.toNanos();
      byte[] buf = new byte[8192];
      try {
        while (!fullyRead()) {
          if (count >= limit || System.nanoTime() - deadline > 0) return false;
          int n = in.read(buf, 0, (int) Math.min(buf.length, limit - count));
          if (n < 0) ended = true;
          else count += n;
        }
        return true;
      } catch (IOException | RuntimeException e) {
        // the client went away or sent a malformed body: nothing to keep
        return false;
      }
    }

    /** No mark/reset: a re-read after reset would be counted twice. */
    @Override
    public boolean markSupported() {
      return false;
    }

    @Override
    public long skip(long n) throws IOException {
      readStarted = true;
      long skipped = super.skip(n);
      if (skipped > 0) add(skipped);
      return skipped;
    }

    private void add(long n) {
      count += n;
      if (count > max) throw tooLarge(max);
    }
  }
}
