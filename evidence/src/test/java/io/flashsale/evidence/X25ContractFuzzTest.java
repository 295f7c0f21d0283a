package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.api.resources.OpenApiResource;
import io.flashsale.launcher.cli.HttpJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * the contract, fuzzed. schemathesis (the version pinned in ./flashsale, installed into
 * .tools/venv by ./flashsale test) reads GET /openapi.json of the running service and sends every
 * operation but the event stream (a stream stays open by design) generated and malformed input,
 * plus stateful walks along the document's links (create → get / pay / cancel). It must find no
 * 5xx, no answer the document does not allow (status, content type, schema, Allow on 405), no
 * request unanswered within 10 s; afterwards nothing is pending, the reconciliation is clean and a
 * new order still goes through. Callbacks are HMAC-signed, so the fuzzer only ever gets 401 there
 * (documented). A missing or different schemathesis fails the experiment, never skips it.
 *
 * <p>In-memory engine only: the API surface is the same on both engines, one fuzz run is enough.
 */
@Tag("in-memory-only")
class X25ContractFuzzTest {
  @RegisterExtension static final Stack stack = new Stack();
  @RegisterExtension static final Evidence ev = new Evidence("X-25",
      "the OpenAPI contract fuzzed by schemathesis: no 5xx, nothing outside the document, nothing stuck");

  private static final String SKU = "sku-lab-01"; // the document's example SKU: generated creates reach the workflow
  private static final long BUDGET_SECONDS = Long.getLong("x25.maxTimeSeconds", 120);
  private static final int MAX_RESPONSE_SECONDS = 10;
  private static final String SKIPPED = "GET /orders/{id}/events";

  @Test
  void theDocumentHoldsUnderFuzzing() throws Exception {
    Path repo = repoRoot();
    String pinned = pinnedVersion(repo);
    Path st = schemathesis(repo);
    String version = runQuick(st, "--version");
    ev.check(version.endsWith("version " + pinned), "schemathesis " + pinned + " as pinned in ./flashsale (found: "
        + version + ")");

    stack.sku(SKU, 100_000, 100_000);
    HttpJson buyer = stack.api.login("t1", "fuzz-2501");
    String base = "http://127.0.0.1:" + stack.wiring.apiPort();
    HttpJson.Reply served = stack.api.get("/openapi.json");
    ev.check(served.status() == 200 && HttpJson.JSON.readTree(OpenApiResource.load()).equals(served.body()),
        "GET /openapi.json serves the document kept in the repository");

    Path work = Path.of("target", "schemathesis-x25").toAbsolutePath();
    deleteTree(work);
    Files.createDirectories(work);
    Path report = work.resolve("report");
    Path config = Path.of("target", "test-classes", "schemathesis.toml").toAbsolutePath();
    List<String> command = List.of(st.toString(), "--no-color", "--config-file", config.toString(), "run",
        base + "/openapi.json",
        "-H", "Authorization: Bearer " + buyer.token(),
        "--exclude-operation-id", "orderEvents",
        "--max-time", String.valueOf(BUDGET_SECONDS),
        "--max-examples", "50",
        "--workers", "2",
        "--seed", "25",
        "--request-timeout", String.valueOf(MAX_RESPONSE_SECONDS),
        "--max-response-time", String.valueOf(MAX_RESPONSE_SECONDS),
        "--report", "junit,ndjson", "--report-dir", report.toString());
    Path output = work.resolve("output.txt");
    ProcessBuilder pb = new ProcessBuilder(command).directory(work.toFile()) // its .hypothesis cache stays in target/
        .redirectErrorStream(true).redirectOutput(output.toFile());
    pb.environment().put("NO_COLOR", "1");
    // its workers parse source for Hypothesis' descriptions one at a time (see x25_hooks.py)
    pb.environment().put("PYTHONPATH", Path.of("target", "test-classes", "schemathesis-hooks").toAbsolutePath().toString());
    pb.environment().put("SCHEMATHESIS_HOOKS", "x25_hooks");
    long started = System.nanoTime();
    Process p = pb.start();
    boolean finished;
    try {
      // --max-time bounds generation; the margin covers loading, shrinking a failure and the reports
      finished = p.waitFor(BUDGET_SECONDS + 240, TimeUnit.SECONDS);
    } finally {
      if (p.isAlive()) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
      }
    }
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
    String log = Files.readString(output, StandardCharsets.UTF_8);
    ev.check(finished, "schemathesis finished within its budget (" + BUDGET_SECONDS + " s) plus 240 s");
    int exit = p.exitValue();
    ev.note("schemathesis ran " + seconds + " s, exit " + exit + "; " + line(log, "Test cases:", 1));

    // the run's own verdict, with its failures in the record when there are any
    if (exit != 0) ev.note("schemathesis output:\n" + section(log, "FAILURES", 6000));
    Junit junit = junit(report);
    ev.note("junit: tests=" + junit.tests + " failures=" + junit.failures + " errors=" + junit.errors);
    ev.check(exit == 0 && junit.failures == 0 && junit.errors == 0,
        "schemathesis found no failure (not_a_server_error, status/content-type/schema/header conformance,"
            + " negative rejection, positive acceptance, missing header, undeclared method, auth)");

    // every documented operation but the stream was exercised
    TreeSet<String> expected = new TreeSet<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = served.body().path("paths").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> path = it.next();
      path.getValue().fieldNames().forEachRemaining(m -> expected.add(m.toUpperCase() + " " + path.getKey()));
    }
    expected.remove(SKIPPED);
    expected.remove("GET /openapi.json"); // schemathesis leaves out the operation serving its schema; checked above
    TreeSet<String> missed = new TreeSet<>(expected);
    missed.removeAll(junit.names);
    ev.check(missed.isEmpty(), expected.size() + " operations fuzzed: all but " + SKIPPED + " and the document itself"
        + " (not fuzzed: " + missed + ")");

    // every request answered, in time, without a 5xx
    Interactions seen = interactions(report);
    ev.note("requests " + seen.requests + ", slowest answer " + String.format("%.2f", seen.slowest) + " s");
    ev.check(seen.requests >= 200, "at least 200 requests sent (" + seen.requests + ")");
    ev.equal(0, seen.unanswered, "requests without an answer (timeouts, resets)");
    ev.check(seen.slowest <= MAX_RESPONSE_SECONDS, "every answer within " + MAX_RESPONSE_SECONDS + " s");
    ev.equal(0, seen.serverErrors, "5xx answers");
    ev.check(seen.byOperation.getOrDefault("POST /orders", Map.of()).keySet().stream().anyMatch(s -> s.startsWith("2")),
        "generated creates reached the workflow (some POST /orders answered 2xx)");

    // nothing stuck: payments the fuzzer started settle, the books agree, a new order goes through
    stack.awaitNothingPending(120_000);
    ev.note("orders after the fuzz: " + stack.sql.count("SELECT count(*) FROM orders") + ", by status "
        + statusCounts());
    String reconcile = stack.checkReconcileClean(ev, "reconciliation clean after the fuzz (no mismatch, nothing pending, no drift)");
    HttpJson after = stack.api.login("t1", "after-2502");
    HttpJson.Reply created = Buyers.create(after, "x25-after", SKU, 1);
    ev.equal(201, created.status(), "a new order after the fuzz is created");
    HttpJson.Reply paid = after.post("/orders/" + created.text("order_id") + "/pay", null);
    ev.equal(200, paid.status(), "and paid");

    writeSummary(version, command, buyer.token(), seconds, exit, log, junit, seen, reconcile);
  }

  // --- schemathesis: where it is, which version

  /** The folder holding ./flashsale (flashsale.home, else the nearest one up from here). */
  private static Path repoRoot() {
    String home = System.getProperty("flashsale.home", "");
    if (!home.isBlank()) return Path.of(home).toAbsolutePath();
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("flashsale")) && Files.isRegularFile(dir.resolve("pom.xml"))) return dir;
    }
    throw new AssertionError("no ./flashsale found above " + Path.of("").toAbsolutePath());
  }

  /** One pin for the installer and this check: the SCHEMATHESIS_VERSION line of ./flashsale. */
  private static String pinnedVersion(Path repo) throws IOException {
    Matcher m = Pattern.compile("(?m)^SCHEMATHESIS_VERSION=([0-9.]+)").matcher(Files.readString(repo.resolve("flashsale")));
    if (!m.find()) throw new AssertionError("no SCHEMATHESIS_VERSION in ./flashsale");
    return m.group(1);
  }

  private static Path schemathesis(Path repo) {
    String configured = System.getProperty("schemathesis.bin", "");
    Path st = configured.isBlank() ? repo.resolve(".tools/venv/bin/st") : Path.of(configured);
    boolean there = Files.isExecutable(st);
    ev.check(there, there ? "schemathesis at " + RunStamp.shown(st)
        : "schemathesis missing at " + st + ": run ./flashsale install-schemathesis (./flashsale test does it)");
    return st;
  }

  private static String runQuick(Path st, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(st.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (!p.waitFor(60, TimeUnit.SECONDS)) p.destroyForcibly();
    return out;
  }

  // --- its reports

  record Junit(int tests, int failures, int errors, TreeSet<String> names) {}

  private static Junit junit(Path report) throws Exception {
    Path file;
    try (var files = Files.list(report)) {
      file = files.filter(f -> f.getFileName().toString().startsWith("junit")).findFirst()
          .orElseThrow(() -> new AssertionError("no junit report in " + report));
    }
    Document d = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
    Element root = d.getDocumentElement();
    TreeSet<String> names = new TreeSet<>();
    NodeList cases = d.getElementsByTagName("testcase");
    for (int i = 0; i < cases.getLength(); i++) names.add(((Element) cases.item(i)).getAttribute("name"));
    return new Junit(Integer.parseInt(root.getAttribute("tests")), Integer.parseInt(root.getAttribute("failures")),
        Integer.parseInt(root.getAttribute("errors")), names);
  }

  static final class Interactions {
    int requests;
    int unanswered;
    int serverErrors;
    double slowest;
    /** "METHOD /path" (or "METHOD Stateful tests") → status → count. */
    final Map<String, Map<String, Integer>> byOperation = new TreeMap<>();
  }

  /** Every request of the run, from the NDJSON event log: status, time to answer. */
  private static Interactions interactions(Path report) throws IOException {
    Path file;
    try (var files = Files.list(report)) {
      file = files.filter(f -> f.getFileName().toString().startsWith("ndjson")).findFirst()
          .orElseThrow(() -> new AssertionError("no ndjson report in " + report));
    }
    Interactions out = new Interactions();
    try (var lines = Files.lines(file, StandardCharsets.UTF_8)) {
      for (Iterator<String> it = lines.iterator(); it.hasNext(); ) {
        JsonNode event = HttpJson.JSON.readTree(it.next());
        JsonNode finished = event.get("ScenarioFinished");
        if (finished == null) continue;
        JsonNode recorder = finished.path("recorder");
        String label = recorder.path("label").asText();
        for (JsonNode i : recorder.path("interactions")) {
          out.requests++;
          String method = i.path("request").path("method").asText();
          // the method sent and the operation's path: an undeclared method is listed under its path
          String operation = method + " " + (label.matches("[A-Z]+ /.*") ? label.substring(label.indexOf(' ') + 1) : label);
          JsonNode response = i.get("response");
          String status;
          if (response == null || response.isNull()) {
            out.unanswered++;
            status = "none";
          } else {
            int code = response.path("status_code").asInt();
            if (code >= 500) out.serverErrors++;
            out.slowest = Math.max(out.slowest, response.path("elapsed").asDouble());
            status = String.valueOf(code);
          }
          out.byOperation.computeIfAbsent(operation, k -> new TreeMap<>()).merge(status, 1, Integer::sum);
        }
      }
    }
    return out;
  }

  private static String statusCounts() {
    Map<String, Long> counts = new TreeMap<>();
    for (String s : List.of("CREATED", "PAYING", "UNKNOWN", "PAID", "FAILED", "CANCELLED", "REFUNDING", "REFUNDED")) {
      long n = stack.sql.count("SELECT count(*) FROM orders WHERE status = ?", s);
      if (n > 0) counts.put(s, n);
    }
    return counts.toString();
  }

  // --- the record in target/schemathesis/summary.txt with its manifest (published to evidence/schemathesis/)

  private static void writeSummary(String version, List<String> command, String token, long seconds, int exit,
      String log, Junit junit, Interactions seen, String reconcile) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append("# X-25 contract fuzz: schemathesis ").append(version.replaceAll(".*version ", "")).append(" against GET /openapi.json of the running service (")
        .append(Stack.ENGINE).append(" engine), ").append(Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS))
        .append(", ").append(Runtime.getRuntime().availableProcessors()).append(" cores\n");
    sb.append(RunStamp.CURRENT.line()).append('\n');
    List<String> shown = new ArrayList<>();
    for (String c : command) shown.add((c.contains(" ") ? "'" + c + "'" : c).replace(token, "<token>").replaceAll("^/.*/(\\.tools/venv/bin/st)$", "$1")
        .replaceAll("^/.*/target/", "target/").replaceAll("http://127\\.0\\.0\\.1:[0-9]+", "http://127.0.0.1:<port>"));
    sb.append("command: ").append(String.join(" ", shown)).append('\n');
    sb.append("result: exit ").append(exit).append(", ").append(seconds).append(" s; ")
        .append(line(log, "Test cases:", 1)).append("; junit tests=").append(junit.tests).append(" failures=")
        .append(junit.failures).append(" errors=").append(junit.errors).append('\n');
    sb.append("phases: ").append(section(log, "Test Phases:", 200).replaceAll("\\s+", " ").trim()).append('\n');
    sb.append("requests: ").append(seen.requests).append(", unanswered ").append(seen.unanswered).append(", 5xx ")
        .append(seen.serverErrors).append(", slowest ").append(String.format("%.2f", seen.slowest)).append(" s\n");
    sb.append("answers by method and path (undeclared methods included; stateful walks under \"Stateful tests\"):\n");
    seen.byOperation.entrySet().stream().sorted(Comparator.comparing(Map.Entry::getKey))
        .forEach(e -> sb.append("  ").append(e.getKey()).append("  ").append(e.getValue()).append('\n'));
    sb.append("reconcile after the fuzz: ").append(reconcile).append('\n');
    sb.append("not fuzzed: ").append(SKIPPED).append(" (an event stream stays open by design)\n");
    Path dir = Path.of(System.getProperty("evidence.schemathesis.dir", "target/schemathesis"));
    RunStamp.emptyFolder(dir);
    Files.writeString(dir.resolve("summary.txt"), sb.toString());
    RunStamp.writeManifest(dir, "X-25", List.of("summary.txt"));
    ev.note("summary written to " + RunStamp.shown(dir.resolve("summary.txt")));
  }

  /** The first line containing the marker, or the n-th line after it. */
  private static String line(String log, String marker, int after) {
    String[] lines = log.split("\n");
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].contains(marker)) return i + after < lines.length ? lines[i + after].trim() : "";
    }
    return "";
  }

  /** The text from a heading on, at most max characters. */
  private static String section(String log, String heading, int max) {
    int at = log.indexOf(heading);
    if (at < 0) return log.length() > max ? log.substring(log.length() - max) : log;
    String rest = log.substring(at + heading.length());
    // a list ends at its blank line, a banner section at the next banner
    int end = heading.endsWith(":") ? rest.indexOf("\n\n") : rest.indexOf("\n===");
    if (end > 0) rest = rest.substring(0, end);
    return rest.length() > max ? rest.substring(0, max) : rest;
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) return;
    try (var walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
    }
  }
}
