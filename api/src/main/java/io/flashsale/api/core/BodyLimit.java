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
 * <p>A request answered before its body was read (401, 403 CSRF, 404 …) leaves bytes on the
 * connection. The container then closes it after answering, without saying so in the answer, and a
 * client that sends its next request on that kept-alive connection loses it (a POST is not
 * retried). So what has already arrived is dropped, without waiting for more (a refusal never
 * waits for a slow body, and never asks for it with 100 Continue); if anything is still to come,
 * the answer says {@code Connection: close}.
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
    boolean chunked = request.getHeaderString("Transfer-Encoding") != null;
    Counting counting = new Counting(request.getEntityStream(), maxBytes, declaredLength(length), chunked);
    request.setProperty(STREAM, counting);
    request.setEntityStream(counting);
  }

  @Override
  public void filter(ContainerRequestContext request, ContainerResponseContext response) {
    // an accepted request's resource read its body; a refusal may not have
    if (response.getStatus() < 400) return;
    if (!(request.getProperty(STREAM) instanceof Counting body) || !body.hasBody() || body.fullyRead()) return;
    boolean expectsContinue = request.getHeaderString("Expect") != null;
    if (response.getStatus() == 413 || expectsContinue || !body.dropArrived()) {
      response.getHeaders().putSingle("Connection", "close");
    }
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
    private final boolean chunked;
    private long count;
    private boolean ended;

    Counting(InputStream in, long max, long declared, boolean chunked) {
      super(in);
      this.max = max;
      this.declared = declared;
      this.chunked = chunked;
    }

    boolean hasBody() {
      return declared > 0 || chunked;
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

    /**
     * Reads and drops what has arrived, never waiting for more; true when nothing of the body is
     * left on the connection.
     */
    boolean dropArrived() {
      byte[] buf = new byte[4096];
      try {
        int ready;
        while (!fullyRead() && (ready = available()) > 0) {
          if (read(buf, 0, Math.min(buf.length, ready)) < 0) break;
        }
        return fullyRead();
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
