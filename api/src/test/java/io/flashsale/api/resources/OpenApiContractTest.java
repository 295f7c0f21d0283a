package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dropwizard.auth.Auth;
import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOutcome;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.MatrixParam;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import java.io.IOException;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document (api/src/main/resources/openapi.json) is the contract: every JAX-RS
 * resource method has its path and operation there and every operation there has its method, with
 * the same path, query and header parameters, body and auth; response codes are plausible; every
 * error code the source can send is in the document's ErrorCode list; every error answer is a
 * problem detail (application/problem+json, Problem) but the order commands' outcomes; every 401
 * declares WWW-Authenticate; every operation that reads or writes the database declares 503
 * DATABASE_UNAVAILABLE with Retry-After.
 */
class OpenApiContractTest {
  /** A key twice in one object would be read as its last value by some tools and its first by others. */
  private static final ObjectMapper JSON = new ObjectMapper()
      .enable(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
  private static final Set<String> HTTP_METHODS = Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");
  private static final JsonNode DOC = read();
  /** Headers the authentication filter reads, documented on the operations but no resource parameter. */
  private static final Set<String> FILTER_HEADERS = Set.of("x-csrf-token");
  /**
   * Headers a payment callback's {@link io.flashsale.paymentchannel.CallbackReader} reads (the
   * default channel's, the stub's format), documented on the callback operations but no resource
   * parameter: the resource hands the reader every header.
   */
  private static final Set<String> CALLBACK_READER_HEADERS =
      Set.of(io.flashsale.paymentchannel.CallbackSignatures.HEADER.toLowerCase());
  /** The one operation that never touches the database. */
  private static final Set<String> WITHOUT_DATABASE = Set.of("GET /openapi.json");
  /** Order outcomes answered with an error status: the source chapter's contract, application/json. */
  private static final Set<String> OUTCOME_SCHEMAS = Set.of("CreateRefusal", "Overloaded", "CommandAnswer");
  private static final Set<String> ORDER_COMMANDS = Set.of("POST /orders", "POST /orders/{id}/pay", "POST /orders/{id}/cancel");

  private static JsonNode read() {
    try {
      return JSON.readTree(OpenApiResource.load());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A resource method as JAX-RS sees it. */
  record Op(String key, Method method, Class<?> resource) {}

  @Test
  void everyResourceMethodIsDocumentedAndEveryOperationImplemented() throws Exception {
    Map<String, Op> code = resourceOperations();
    Set<String> doc = documentedOperations().keySet();
    assertFalse(code.isEmpty(), "no resource found");
    Set<String> undocumented = new TreeSet<>(code.keySet());
    undocumented.removeAll(doc);
    Set<String> unimplemented = new TreeSet<>(doc);
    unimplemented.removeAll(code.keySet());
    assertTrue(undocumented.isEmpty(), "resource methods missing from openapi.json: " + undocumented);
    assertTrue(unimplemented.isEmpty(), "operations in openapi.json with no resource method: " + unimplemented);
  }

  @Test
  void everyResourceClassIsRegisteredByTheApplication() throws Exception {
    // the contract is of the running API: a resource class nobody registers would be documented in vain
    String app = Files.readString(Paths.get("src/main/java/io/flashsale/api/RestApi.java"));
    for (Class<?> c : resourceClasses()) {
      assertTrue(app.contains("new " + c.getSimpleName() + "(") || app.contains("new " + c.getName() + "("),
          c.getSimpleName() + " is not registered in RestApi");
    }
  }

  @Test
  void parametersBodiesAndAuthMatch() throws Exception {
    Map<String, JsonNode> doc = documentedOperations();
    for (Op op : resourceOperations().values()) {
      JsonNode d = doc.get(op.key());
      if (d == null) continue; // reported by everyResourceMethodIsDocumentedAndEveryOperationImplemented
      Set<String> path = new TreeSet<>();
      Set<String> query = new TreeSet<>();
      Set<String> header = new TreeSet<>();
      boolean auth = false;
      boolean body = false;
      for (Parameter p : op.method().getParameters()) {
        if (p.isAnnotationPresent(PathParam.class)) path.add(p.getAnnotation(PathParam.class).value());
        else if (p.isAnnotationPresent(QueryParam.class)) query.add(p.getAnnotation(QueryParam.class).value());
        else if (p.isAnnotationPresent(HeaderParam.class)) header.add(p.getAnnotation(HeaderParam.class).value().toLowerCase());
        else if (p.isAnnotationPresent(Auth.class)) auth = true;
        else if (!p.isAnnotationPresent(Context.class) && !p.isAnnotationPresent(CookieParam.class)
            && !p.isAnnotationPresent(FormParam.class) && !p.isAnnotationPresent(MatrixParam.class)
            && !p.isAnnotationPresent(BeanParam.class)) body = true;
      }
      Set<String> dPath = new TreeSet<>();
      Set<String> dQuery = new TreeSet<>();
      Set<String> dHeader = new TreeSet<>();
      for (JsonNode p : d.path("parameters")) {
        JsonNode r = resolve(p);
        String name = r.path("name").asText();
        switch (r.path("in").asText()) {
          case "path" -> dPath.add(name);
          case "query" -> dQuery.add(name);
          case "header" -> {
            if (!FILTER_HEADERS.contains(name.toLowerCase())) dHeader.add(name.toLowerCase());
          }
          default -> throw new AssertionError(op.key() + ": unexpected parameter location " + r);
        }
      }
      if (op.key().startsWith("POST /callbacks/payment")) header.addAll(CALLBACK_READER_HEADERS);
      assertEquals(path, dPath, op.key() + " path parameters");
      assertEquals(query, dQuery, op.key() + " query parameters");
      assertEquals(header, dHeader, op.key() + " header parameters");
      assertEquals(body, d.has("requestBody"), op.key() + " request body");
      JsonNode security = d.has("security") ? d.get("security") : DOC.get("security");
      assertEquals(auth, security.size() > 0, op.key() + " needs a session token in the code iff in the document");
      if (body) {
        assertTrue(d.path("requestBody").path("content").has("application/json"), op.key() + " body is JSON");
      }
      Produces produces = op.method().isAnnotationPresent(Produces.class)
          ? op.method().getAnnotation(Produces.class) : op.resource().getAnnotation(Produces.class);
      if (produces != null) {
        for (String type : produces.value()) {
          boolean shown = false;
          for (Iterator<Map.Entry<String, JsonNode>> it = d.path("responses").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> r = it.next();
            if (r.getKey().startsWith("2") && resolve(r.getValue()).path("content").has(type)) shown = true;
          }
          assertTrue(shown, op.key() + " produces " + type + ": a 2xx response must show it");
        }
      }
    }
  }

  @Test
  void responseCodesArePlausible() {
    documentedOperations().forEach((key, d) -> {
      JsonNode responses = d.path("responses");
      assertTrue(responses.size() > 0, key + " has responses");
      boolean success = false;
      for (Iterator<Map.Entry<String, JsonNode>> it = responses.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        assertTrue(e.getKey().matches("[1-5][0-9][0-9]"), key + ": response code " + e.getKey());
        int status = Integer.parseInt(e.getKey());
        if (status >= 200 && status < 300) success = true;
        JsonNode r = resolve(e.getValue());
        assertTrue(r.hasNonNull("description"), key + " " + status + " has a description");
        if (status >= 400) {
          // an error answers a problem detail; only the order commands answer an outcome (JSON) instead
          JsonNode content = r.path("content");
          assertTrue(content.size() > 0, key + " " + status + " has a body");
          for (Iterator<Map.Entry<String, JsonNode>> c = content.fields(); c.hasNext(); ) {
            Map.Entry<String, JsonNode> type = c.next();
            String ref = type.getValue().path("schema").path("$ref").asText();
            if (type.getKey().equals("application/problem+json")) {
              assertEquals("#/components/schemas/Problem", ref, key + " " + status + " problem schema");
            } else {
              assertEquals("application/json", type.getKey(), key + " " + status + " answers " + type.getKey());
              assertTrue(ORDER_COMMANDS.contains(key), key + " " + status + ": only the order commands answer an outcome");
              assertTrue(OUTCOME_SCHEMAS.contains(ref.replace("#/components/schemas/", "")),
                  key + " " + status + ": application/json only for an order outcome: " + ref);
            }
          }
        }
      }
      assertTrue(success, key + " has a 2xx answer");
      JsonNode security = d.has("security") ? d.get("security") : DOC.get("security");
      if (security.size() > 0) {
        assertTrue(responses.has("401"), key + " needs a token: 401 documented");
        assertTrue(responses.has("403"), key + " needs a token: 403 (revoked, CSRF) documented");
      }
    });
  }

  @Test
  void everyErrorIsAProblemDetailButTheOrderOutcomes() {
    JsonNode problem = DOC.at("/components/schemas/Problem");
    Set<String> required = new TreeSet<>();
    problem.path("required").forEach(n -> required.add(n.asText()));
    assertEquals(new TreeSet<>(Set.of("type", "title", "status", "detail", "code", "error")), required);
    assertEquals("#/components/schemas/ErrorCode", problem.at("/properties/code/$ref").asText());
    assertEquals("#/components/schemas/ErrorCode", problem.at("/properties/error/$ref").asText());
    assertFalse(problem.path("properties").has("message"), "message is the detail now");
    assertTrue(DOC.at("/components/schemas/Error").isMissingNode(), "no other error shape");
    int errors = 0;
    for (Map.Entry<String, JsonNode> op : documentedOperations().entrySet()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = op.getValue().path("responses").fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (Integer.parseInt(e.getKey()) < 400) continue;
        JsonNode content = resolve(e.getValue()).path("content");
        boolean outcome = ORDER_COMMANDS.contains(op.getKey()) && !content.has("application/problem+json");
        if (outcome) continue; // SOLD_OUT, USER_LIMIT, UNKNOWN_SKU, KEY_REUSED, REJECTED: no errors, outcomes
        errors++;
        assertEquals("#/components/schemas/Problem", content.at("/application~1problem+json/schema/$ref").asText(),
            op.getKey() + " " + e.getKey() + " is a problem detail");
      }
    }
    assertTrue(errors > 30, "error responses found: " + errors);
  }

  @Test
  void every401SaysHowToAuthenticate() {
    documentedOperations().forEach((key, d) -> {
      JsonNode r = d.path("responses").path("401");
      if (r.isMissingNode()) return;
      JsonNode header = resolve(resolve(r).path("headers").path("WWW-Authenticate"));
      assertFalse(header.isMissingNode(), key + " 401 declares WWW-Authenticate");
      assertTrue(header.path("required").asBoolean(), key + " 401 always sends WWW-Authenticate");
    });
    String callback = resolve(DOC.at("/paths/~1callbacks~1payment/post/responses/401")).path("description").asText();
    assertTrue(callback.contains("Signature realm=\"flashsale-callbacks\""), callback);
  }

  @Test
  void everyOperationOnTheDatabaseDeclares503DatabaseUnavailableWithRetryAfter() {
    documentedOperations().forEach((key, d) -> {
      if (WITHOUT_DATABASE.contains(key)) return;
      JsonNode r = resolve(d.path("responses").path("503"));
      assertFalse(r.isMissingNode(), key + " declares 503");
      assertTrue(r.path("description").asText().contains("DATABASE_UNAVAILABLE"), key + " 503 names DATABASE_UNAVAILABLE");
      JsonNode retryAfter = resolve(r.path("headers").path("Retry-After"));
      assertTrue(retryAfter.path("required").asBoolean(), key + " 503 always sends Retry-After");
      assertEquals("#/components/schemas/Problem", r.at("/content/application~1problem+json/schema/$ref").asText(),
          key + " 503 DATABASE_UNAVAILABLE is a problem detail");
    });
  }

  @Test
  void theUnsafeCookieOperationsDeclareTheCsrfHeader() {
    documentedOperations().forEach((key, d) -> {
      JsonNode security = d.has("security") ? d.get("security") : DOC.get("security");
      boolean unsafe = !key.startsWith("GET ") && !key.startsWith("HEAD ") && !key.startsWith("OPTIONS ");
      boolean declared = false;
      for (JsonNode p : d.path("parameters")) {
        JsonNode r = resolve(p);
        if (r.path("in").asText().equals("header") && r.path("name").asText().equalsIgnoreCase("X-CSRF-Token")) {
          declared = true;
          assertFalse(r.path("required").asBoolean(), key + ": X-CSRF-Token is optional (bearer callers send none)");
        }
      }
      assertEquals(unsafe && security.size() > 0, declared, key + " declares X-CSRF-Token iff cookie-authenticated and unsafe");
    });
  }

  @Test
  void theExportNamesItsFileAndTheStreamItsEvents() {
    JsonNode header = resolve(DOC.at("/paths/~1orders~1export.csv/get/responses/200/headers/Content-Disposition"));
    assertTrue(header.path("required").asBoolean(), "the export's Content-Disposition: " + header);
    String events = DOC.at("/paths/~1orders~1{id}~1events/get/description").asText();
    for (String event : List.of("'transition'", "'expired'", "'revoked'")) {
      assertTrue(events.contains(event), "the event stream's description names " + event);
    }
  }

  /** The chapter's create contract: 201 CREATED for the call that made the order, 200 REPLAY for its retries. */
  @Test
  void aCreateIs201CreatedAndItsRetry200ReplayWithTheReplayedHeader() {
    JsonNode responses = DOC.at("/paths/~1orders/post/responses");
    assertTrue(responses.at("/201/content/application~1json/schema/$ref").asText().endsWith("/CreatedOrder"));
    assertTrue(responses.at("/200/content/application~1json/schema/$ref").asText().endsWith("/ReplayedOrder"));
    assertTrue(DOC.at("/components/schemas/CreatedOrder/properties/outcome/enum").toString().equals("[\"CREATED\"]"));
    assertTrue(DOC.at("/components/schemas/ReplayedOrder/properties/outcome/enum").toString().equals("[\"REPLAY\"]"));
    JsonNode header = resolve(responses.at("/200/headers/" + OrderResource.REPLAYED_HEADER));
    assertTrue(header.path("required").asBoolean(), "the replay's header is documented as always sent: " + header);
    assertTrue(resolve(responses.get("422")).toString().contains("CreateRefusal"), "422 KEY_REUSED is documented");
  }

  @Test
  void everyReferenceResolves() {
    List<String> refs = new ArrayList<>();
    collectRefs(DOC, refs);
    assertFalse(refs.isEmpty());
    for (String ref : refs) assertFalse(pointer(ref).isMissingNode(), "unresolved " + ref);
    assertEquals("3.1.0", DOC.path("openapi").asText());
  }

  @Test
  void everyErrorCodeInTheSourceIsDocumented() throws IOException {
    Set<String> documented = new TreeSet<>();
    DOC.at("/components/schemas/ErrorCode/enum").forEach(n -> documented.add(n.asText()));
    Set<String> used = new TreeSet<>();
    Pattern call = Pattern.compile(
        "ApiError\\.(?:exception|badRequest|response|unauthorized|unavailable|tooMany)\\(\\s*(?:[\\w.]+\\s*,\\s*)?\"([A-Z_]+)\"");
    Pattern problem = Pattern.compile("Problem\\.of\\(\\s*\\d+\\s*,\\s*\"([A-Z_]+)\"");
    Pattern entry = Pattern.compile("\"error\",\\s*\"([A-Z_]+)\"");
    Pattern mapped = Pattern.compile("->\\s*\"([A-Z_]+)\"");
    try (Stream<java.nio.file.Path> files = Files.walk(Paths.get("src/main/java"))) {
      for (java.nio.file.Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String src = Files.readString(f);
        // the admin port's codes (tasks/) are not the REST API's
        if (f.toString().contains("/tasks/")) continue;
        for (Pattern p : List.of(call, entry, problem)) {
          Matcher m = p.matcher(src);
          while (m.find()) used.add(m.group(1));
        }
        if (f.endsWith("ErrorMappers.java")) {
          Matcher m = mapped.matcher(src);
          while (m.find()) used.add(m.group(1));
        }
      }
    }
    assertTrue(used.size() > 10, "the scan found the codes: " + used);
    // the channels' callback readers refuse with codes the callback routes answer
    // (and the field rules of JsonFields, which the API's bodies and the readers share)
    Pattern refusal = Pattern.compile(
        "(?:CallbackRefusal(?:\\.badRequest\\(|\\(\\s*\\d+\\s*,)|new Refusal\\()\\s*\"([A-Z_]+)\"");
    Set<String> refusals = new TreeSet<>();
    try (Stream<java.nio.file.Path> files = Files.walk(Paths.get("../payment-channel/src/main/java"))) {
      for (java.nio.file.Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        Matcher m = refusal.matcher(Files.readString(f));
        while (m.find()) refusals.add(m.group(1));
      }
    }
    assertTrue(refusals.containsAll(List.of("BAD_SIGNATURE", "MALFORMED_JSON", "MISSING_FIELD")),
        "the scan found the readers' codes: " + refusals);
    used.addAll(refusals);
    Set<String> missing = new TreeSet<>(used);
    missing.removeAll(documented);
    assertTrue(missing.isEmpty(), "error codes sent but not in openapi.json ErrorCode: " + missing);

    Set<String> outcomes = new TreeSet<>();
    DOC.at("/components/schemas/CreatedOrder/properties/outcome/enum").forEach(n -> outcomes.add(n.asText()));
    DOC.at("/components/schemas/ReplayedOrder/properties/outcome/enum").forEach(n -> outcomes.add(n.asText()));
    DOC.at("/components/schemas/CreateRefusal/properties/outcome/enum").forEach(n -> outcomes.add(n.asText()));
    for (CreateOutcome v : CreateOutcome.values()) {
      assertTrue(outcomes.contains(v.name()), "create outcome " + v + " not in openapi.json");
    }
    // the command outcomes a pay / cancel answer carries
    Set<String> commandOutcomes = new TreeSet<>();
    DOC.at("/components/schemas/CommandAnswer/properties/outcome/enum").forEach(n -> commandOutcomes.add(n.asText()));
    for (CommandOutcome v : CommandOutcome.values()) {
      assertTrue(commandOutcomes.contains(v.name()), "command outcome " + v + " not in openapi.json");
    }
  }

  // --- the two sides

  private static Map<String, JsonNode> documentedOperations() {
    Map<String, JsonNode> ops = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = DOC.path("paths").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> p = it.next();
      for (Iterator<Map.Entry<String, JsonNode>> m = p.getValue().fields(); m.hasNext(); ) {
        Map.Entry<String, JsonNode> op = m.next();
        if (HTTP_METHODS.contains(op.getKey())) ops.put(op.getKey().toUpperCase() + " " + p.getKey(), op.getValue());
      }
    }
    return ops;
  }

  private static Map<String, Op> resourceOperations() throws Exception {
    Map<String, Op> ops = new TreeMap<>();
    for (Class<?> c : resourceClasses()) {
      String base = c.getAnnotation(Path.class).value();
      for (Method m : c.getMethods()) {
        String verb = null;
        for (Annotation a : m.getAnnotations()) {
          HttpMethod h = a.annotationType().getAnnotation(HttpMethod.class);
          if (h != null) verb = h.value();
        }
        if (verb == null) continue; // a sub-resource locator would need its own walk; there is none
        String sub = m.isAnnotationPresent(Path.class) ? m.getAnnotation(Path.class).value() : "";
        String key = verb + " " + normalize(base + "/" + sub);
        Op previous = ops.put(key, new Op(key, m, c));
        assertTrue(previous == null, key + " twice");
      }
    }
    return ops;
  }

  /** Every @Path class of the API's resources package (compiled classes on the test classpath). */
  private static List<Class<?>> resourceClasses() throws IOException, URISyntaxException, ClassNotFoundException {
    String pkg = OpenApiResource.class.getPackageName();
    java.nio.file.Path dir = Paths.get(OpenApiResource.class.getResource("OpenApiResource.class").toURI()).getParent();
    List<Class<?>> out = new ArrayList<>();
    try (Stream<java.nio.file.Path> files = Files.list(dir)) {
      for (java.nio.file.Path f : files.sorted().toList()) {
        String name = f.getFileName().toString();
        if (!name.endsWith(".class") || name.contains("$")) continue;
        Class<?> c = Class.forName(pkg + "." + name.substring(0, name.length() - 6));
        if (c.isAnnotationPresent(Path.class)) out.add(c);
      }
    }
    return out;
  }

  /** /a//b/{id: regex}/ → /a/b/{id} */
  static String normalize(String path) {
    String p = path.replaceAll("\\{\\s*([A-Za-z0-9_]+)\\s*:[^}]*}", "{$1}").replaceAll("/+", "/");
    if (!p.startsWith("/")) p = "/" + p;
    if (p.length() > 1 && p.endsWith("/")) p = p.substring(0, p.length() - 1);
    return p;
  }

  private static JsonNode resolve(JsonNode n) {
    return n.has("$ref") ? resolve(pointer(n.get("$ref").asText())) : n;
  }

  private static JsonNode pointer(String ref) {
    assertTrue(ref.startsWith("#/"), "local references only: " + ref);
    return DOC.at(ref.substring(1));
  }

  private static void collectRefs(JsonNode n, List<String> out) {
    if (n.isObject()) {
      n.fields().forEachRemaining(e -> {
        if (e.getKey().equals("$ref")) out.add(e.getValue().asText());
        else collectRefs(e.getValue(), out);
      });
    } else if (n.isArray()) {
      n.forEach(c -> collectRefs(c, out));
    }
  }
}
