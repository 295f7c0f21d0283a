package io.flashsale.api.tasks;

import io.flashsale.api.core.ApiError;
import io.flashsale.problem.Problem;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The admin port's door (docs/DESIGN.md §Admin tasks). Every request but GET and HEAD needs the
 * {@code X-Requested-By} header (Jersey's CSRF convention: a web page cannot send it cross-origin
 * without a preflight the admin port never allows, so a page in the operator's browser cannot
 * fire a task, however it spells the path). In the local default the port answers only loopback
 * peers whose {@code Host} is a loopback name, so a rebound DNS name cannot read it; anywhere else
 * every request but the liveness and health checks needs the admin credential
 * ({@code Authorization: Bearer <auth.adminToken>}).
 */
public final class AdminGuard implements Filter {
  public static final String REQUESTED_BY = "X-Requested-By";
  /** What a load balancer or orchestrator probes without a credential: they say nothing about orders. */
  private static final Set<String> OPEN_READS = Set.of("/ping", "/healthcheck");
  /** localhost, 127.x.x.x or [::1], with or without a port. */
  private static final Pattern LOOPBACK_HOST =
      Pattern.compile("(localhost|127(\\.\\d{1,3}){3}|\\[::1])(:\\d{1,5})?");
  private static final String BEARER = "Bearer ";
  /** The codec endpoint (docs/DESIGN.md §Payload encryption): the credential, but its own CSRF rule. */
  private static final String CODEC_PREFIX = "/codec/";

  private final boolean localDefault;
  private final byte[] token;

  /**
   * @param localDefault the loopback-only local default: the Host check instead of the credential
   * @param adminToken the admin credential; required outside the local default
   */
  public AdminGuard(boolean localDefault, String adminToken) {
    if (!localDefault && (adminToken == null || adminToken.isBlank())) {
      throw new IllegalArgumentException("outside the local default the admin port needs auth.adminToken");
    }
    this.localDefault = localDefault;
    this.token = adminToken == null || adminToken.isBlank() ? null : adminToken.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest req = (HttpServletRequest) request;
    HttpServletResponse res = (HttpServletResponse) response;
    // the path the container routes by (decoded, normalised), never the raw URI
    String path = req.getServletPath() + (req.getPathInfo() == null ? "" : req.getPathInfo());
    boolean read = "GET".equals(req.getMethod()) || "HEAD".equals(req.getMethod());
    if (localDefault) {
      String host = req.getHeader("Host");
      if (host == null || !LOOPBACK_HOST.matcher(host.toLowerCase(Locale.ROOT)).matches() || !loopbackPeer(req)) {
        refuse(res, 403, "ADMIN_HOST_REFUSED", "the local admin port answers only a loopback Host (localhost, 127.0.0.1, [::1])");
        return;
      }
    }
    boolean codec = path.startsWith(CODEC_PREFIX);
    // a CORS preflight never carries a credential; the codec servlet answers it for its Web UI origins only
    boolean preflight = codec && "OPTIONS".equals(req.getMethod());
    boolean open = (OPEN_READS.contains(path) && read) || preflight;
    if (token != null && !open && !credentialValid(req.getHeader("Authorization"))) {
      res.setHeader("WWW-Authenticate", ApiError.ADMIN_CHALLENGE);
      refuse(res, 401, "ADMIN_UNAUTHORIZED", "the admin port needs Authorization: Bearer <auth.adminToken>");
      return;
    }
    // the codec's callers (the Web UI, the temporal CLI) cannot send X-Requested-By; the codec
    // servlet takes JSON from its own origins only, which a foreign page cannot send unpreflighted
    if (!read && !codec) {
      String by = req.getHeader(REQUESTED_BY);
      if (by == null || by.isBlank()) {
        refuse(res, 400, "REQUESTED_BY_REQUIRED", "an admin task needs the " + REQUESTED_BY + " header");
        return;
      }
    }
    chain.doFilter(request, response);
  }

  /** The local default binds the admin port to loopback; a peer from elsewhere is refused all the same. */
  private static boolean loopbackPeer(HttpServletRequest req) {
    try {
      return java.net.InetAddress.getByName(req.getRemoteAddr()).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  private boolean credentialValid(String authorization) {
    if (authorization == null || !authorization.startsWith(BEARER)) return false;
    return MessageDigest.isEqual(authorization.substring(BEARER.length()).getBytes(StandardCharsets.UTF_8), token);
  }

  private static void refuse(HttpServletResponse res, int status, String code, String message) throws IOException {
    res.setStatus(status);
    res.setContentType(Problem.MEDIA_TYPE);
    res.getOutputStream().write(Problem.of(status, code, message).toJson());
  }
}
