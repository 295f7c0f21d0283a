package io.flashsale.api.core;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.HttpHeaders;

/**
 * Answers about a session or a buyer's orders are nobody's to keep: every API answer carries
 * {@code Cache-Control: no-store} (a shared proxy or the browser's cache would hand a token or an
 * order to the next user of the machine), unless the resource set its own (event streams:
 * no-cache) or it is the public contract ({@code /openapi.json}).
 */
public final class NoStore implements ContainerResponseFilter {
  @Override
  public void filter(ContainerRequestContext request, ContainerResponseContext response) {
    if (response.getHeaders().containsKey(HttpHeaders.CACHE_CONTROL)) return;
    if ("openapi.json".equals(request.getUriInfo().getPath())) return;
    response.getHeaders().putSingle(HttpHeaders.CACHE_CONTROL, "no-store");
  }
}
