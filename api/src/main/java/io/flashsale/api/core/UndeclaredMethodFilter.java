package io.flashsale.api.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flashsale.problem.Problem;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Methods outside Dropwizard's allowed set (TRACE, CONNECT, anything invented) never reach Jersey:
 * they are answered here, ahead of Dropwizard's own filter (which answers a bare 405), as a 405 problem
 * detail METHOD_NOT_ALLOWED with the Allow header RFC 9110 requires, taken from the OpenAPI document
 * (the contract, kept equal to the resources by its test); 404 NOT_FOUND for a path it does not have.
 */
public final class UndeclaredMethodFilter implements Filter {
  /** Dropwizard's default allowedMethods: these go on to Jersey, which answers them itself. */
  private static final Set<String> PASSED = Set.of("GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH");

  private final Map<Pattern, String> allow = new LinkedHashMap<>();

  public UndeclaredMethodFilter(byte[] openApiDocument) {
    try {
      JsonNode paths = new ObjectMapper().readTree(openApiDocument).path("paths");
      List<Map.Entry<String, JsonNode>> sorted = new ArrayList<>();
      paths.fields().forEachRemaining(sorted::add);
      // fewer templated segments first: /orders/export.csv is not /orders/{id}
      sorted.sort(java.util.Comparator.comparingLong(e -> e.getKey().chars().filter(c -> c == '{').count()));
      for (Map.Entry<String, JsonNode> p : sorted) {
        Set<String> methods = new TreeSet<>();
        p.getValue().fieldNames().forEachRemaining(m -> methods.add(m.toUpperCase()));
        methods.retainAll(PASSED);
        if (methods.contains("GET")) methods.add("HEAD"); // Jersey answers HEAD for every GET
        methods.add("OPTIONS");
        String regex = Pattern.quote(p.getKey()).replaceAll("\\{[^}/]+}", "\\\\E[^/]+\\\\Q");
        allow.put(Pattern.compile(regex), String.join(", ", methods));
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("unreadable OpenAPI document", e);
    }
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    if (PASSED.contains(request.getMethod())) {
      chain.doFilter(req, res);
      return;
    }
    HttpServletResponse response = (HttpServletResponse) res;
    String path = request.getRequestURI().substring(request.getContextPath().length());
    String methods = allowFor(path);
    response.setContentType(Problem.MEDIA_TYPE);
    if (methods == null) {
      response.setStatus(404);
      response.getOutputStream().write(Problem.of(404, "NOT_FOUND", "Not Found").toJson());
      return;
    }
    response.setStatus(405);
    response.setHeader("Allow", methods);
    response.getOutputStream().write(Problem.of(405, "METHOD_NOT_ALLOWED", "Method Not Allowed").toJson());
  }

  /** The Allow value for a request path (a literal path before a template), null when none matches. */
  String allowFor(String path) {
    for (Map.Entry<Pattern, String> e : allow.entrySet()) {
      if (e.getKey().matcher(path).matches()) return e.getValue();
    }
    return null;
  }
}
