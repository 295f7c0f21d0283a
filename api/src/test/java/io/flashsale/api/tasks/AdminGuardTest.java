package io.flashsale.api.tasks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The admin door outside the local default (docs/DESIGN.md §Admin tasks, §Payload encryption):
 * the codec's preflight passes without a credential, its POST needs the credential but not
 * {@code X-Requested-By}, and the tasks still need both.
 */
class AdminGuardTest {
  private static final String TOKEN = "admin-token-for-the-test";
  private final AdminGuard production = new AdminGuard(false, TOKEN);

  @Test
  void codecPreflightPassesWithoutCredential() throws Exception {
    assertEquals(0, status(production, "OPTIONS", "/codec/decode", Map.of()));
  }

  @Test
  void codecPostWithoutCredentialIs401() throws Exception {
    assertEquals(401, status(production, "POST", "/codec/decode", Map.of()));
  }

  @Test
  void codecPostWithCredentialNeedsNoRequestedBy() throws Exception {
    assertEquals(0, status(production, "POST", "/codec/decode", Map.of("Authorization", "Bearer " + TOKEN)));
  }

  @Test
  void codecPostWithWrongCredentialIs401() throws Exception {
    assertEquals(401, status(production, "POST", "/codec/decode", Map.of("Authorization", "Bearer not-it")));
  }

  @Test
  void taskWithCredentialStillNeedsRequestedBy() throws Exception {
    assertEquals(400, status(production, "POST", "/tasks/reconcile", Map.of("Authorization", "Bearer " + TOKEN)));
    assertEquals(0, status(production, "POST", "/tasks/reconcile",
        Map.of("Authorization", "Bearer " + TOKEN, AdminGuard.REQUESTED_BY, "ops")));
  }

  @Test
  void taskPreflightIsNotOpen() throws Exception {
    assertEquals(401, status(production, "OPTIONS", "/tasks/reconcile", Map.of()));
  }

  @Test
  void healthCheckIsOpen() throws Exception {
    assertEquals(0, status(production, "GET", "/healthcheck", Map.of()));
  }

  /** The status the guard refused with, or 0 when it passed the request on. */
  private static int status(AdminGuard guard, String method, String path, Map<String, String> headers) throws Exception {
    HttpServletRequest req = mock(HttpServletRequest.class);
    when(req.getMethod()).thenReturn(method);
    when(req.getServletPath()).thenReturn(path);
    when(req.getRemoteAddr()).thenReturn("10.0.0.7");
    when(req.getHeader(any())).thenAnswer(a -> headers.get((String) a.getArgument(0)));
    HttpServletResponse res = mock(HttpServletResponse.class);
    int[] status = {0};
    org.mockito.Mockito.doAnswer(a -> status[0] = a.getArgument(0)).when(res).setStatus(org.mockito.ArgumentMatchers.anyInt());
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    when(res.getOutputStream()).thenReturn(new ServletOutputStream() {
      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setWriteListener(WriteListener listener) {}

      @Override
      public void write(int b) {
        body.write(b);
      }
    });
    FilterChain chain = mock(FilterChain.class);
    guard.doFilter(req, res, chain);
    if (status[0] == 0) {
      verify(chain).doFilter(req, res);
    } else {
      verify(chain, never()).doFilter(any(), any());
    }
    return status[0];
  }
}
