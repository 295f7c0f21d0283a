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

/**
 * Request bodies past {@code maxBodyBytes} are refused with 413 BODY_TOO_LARGE before anything
 * reads them: at once when Content-Length says so (before authentication and resource matching),
 * and while reading when there is no length (chunked), the moment the count passes the limit. A
 * resource never sees a partial body, so nothing is stored.
 *
 * <p>A request refused before its body was read (401, 403 CSRF, 404 …) has the rest of its body
 * read and dropped before the answer goes out. Otherwise the container closes the connection after
 * answering, without saying so in the answer, and a client that sends its next request on that
 * kept-alive connection loses it (a POST is not retried). When the rest cannot be read the answer
 * says {@code Connection: close}.
 */
@PreMatching
@Priority(Priorities.AUTHENTICATION - 100)
public final class BodyLimit implements ContainerRequestFilter, ContainerResponseFilter {
  public static final String CODE = "BODY_TOO_LARGE";
  private static final String STREAM = BodyLimit.class.getName() + ".stream";

  private final long maxBytes;

  public BodyLimit(long maxBytes) {
    if (maxBytes < 1) throw new IllegalArgumentException("maxBodyBytes must be positive, not " + maxBytes);
    this.maxBytes = maxBytes;
  }

  @Override
  public void filter(ContainerRequestContext request) {
    String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
    if (length != null && declaredTooLarge(length.trim())) throw tooLarge(maxBytes);
    Counting counting = new Counting(request.getEntityStream(), maxBytes, declaredLength(length));
    request.setProperty(STREAM, counting);
    request.setEntityStream(counting);
  }

  @Override
  public void filter(ContainerRequestContext request, ContainerResponseContext response) {
    if (!(request.getProperty(STREAM) instanceof Counting body) || body.fullyRead()) return;
    if (response.getStatus() == 413 || !body.drain()) response.getHeaders().putSingle("Connection", "close");
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

  /** 413 as JSON; the connection closes, so the unread rest of the body is never read. */
  static WebApplicationException tooLarge(long maxBytes) {
    Response r = Response.fromResponse(ApiError.response(413, CODE,
        "the request body is larger than " + maxBytes + " bytes")).header("Connection", "close").build();
    return new WebApplicationException("request body too large", r);
  }

  /** Counts what is read; past the limit the read fails with the 413 instead of returning data. */
  static final class Counting extends FilterInputStream {
    private final long max;
    /** Content-Length, or -1 when the body is chunked or has no length. */
    private final long declared;
    private long count;
    private boolean ended;

    Counting(InputStream in, long max, long declared) {
      super(in);
      this.max = max;
      this.declared = declared;
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      if (b >= 0) add(1);
      else ended = true;
      return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
      int n = super.read(buf, off, len);
      if (n > 0) add(n);
      else if (n < 0) ended = true;
      return n;
    }

    /** Nothing left on the connection: the end was seen, or as many bytes as declared were read. */
    boolean fullyRead() {
      return ended || declared == 0 || (declared > 0 && count >= declared);
    }

    /** Reads and drops the rest (within the limit); false when that failed and the connection must close. */
    boolean drain() {
      byte[] buf = new byte[4096];
      try {
        while (read(buf, 0, buf.length) >= 0) {
          // dropped
        }
        return true;
      } catch (IOException | WebApplicationException e) {
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
