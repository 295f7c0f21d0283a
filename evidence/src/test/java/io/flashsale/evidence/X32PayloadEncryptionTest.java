package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flashsale.devstack.replay.ReplayGate;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.workflows.codec.PayloadEncryption;
import io.temporal.api.common.v1.Payload;
import io.temporal.payload.codec.PayloadCodecException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * payloads encrypted at rest in the engine (docs/DESIGN.md §Payload encryption). With
 * encryption on (key k1), an order is created with a note and paid; its history, read by the real
 * temporal CLI from the dev server, holds neither the buyer's subject nor the note in any payload,
 * and every payload but the search attributes says binary/encrypted with key id k1. The codec
 * endpoint (the admin port) decodes the same payloads and shows both; the replay gate replays
 * the encrypted histories with the keys and fails without them. The Web UI, in headless
 * Chromium, shows the decoded input, summary and note with its codec endpoint configured. After a rotation (restart
 * with k2 active, k1 still listed) the old history still decodes and replays and new payloads say
 * k2; a codec without k1 refuses them by name. Last, with the admin credential set and the UI
 * started without a codec endpoint: the codec answers 401 without the credential, the CLI decodes
 * with it, and the Web UI shows no subject in the input.
 */
@Tag("dev-server-only")
class X32PayloadEncryptionTest {
  private static final Pattern UPDATE_ACCEPTED = Pattern.compile("Update ?Accepted", Pattern.CASE_INSENSITIVE);
  private static final String K1 = randomKey();
  private static final String K2 = randomKey();
  private static final String ADMIN_TOKEN = randomKey();
  private static final String SKU = "sku-x32";
  private static final String SUBJECT = "user-x32-ada";
  private static final String SUBJECT_2 = "user-x32-bob";
  private static final String NOTE = "x32 gift wrap, leave with the porter";
  /** The engine's state survives the restarts (rotation, UI without codec). */
  private static final Path ENGINE_DB = Path.of("target", "stack-data",
      "x32-temporal-" + System.nanoTime() + ".db").toAbsolutePath();
  private static final Pattern MARKER_BOOKKEEPING = Pattern.compile(
      "markerRecordedEventAttributes\\.details\\.(activityId|meta|time|type|changeId|version)\\.");
  private static final Pattern SUBJECT_FIELD = Pattern.compile("\"subject\"\\s*:\\s*\"" + SUBJECT + "\"");

  @RegisterExtension static final Stack stack = new Stack()
      .with("temporal.devServerDbFile", ENGINE_DB.toString())
      .with("temporal.payloadEncryption.enabled", true)
      .with("temporal.payloadEncryption.activeKeyId", "k1")
      .with("temporal.payloadEncryption.keys.k1", K1);
  @RegisterExtension static final Evidence ev = new Evidence("X-32",
      "payloads encrypted in the engine: history unreadable, codec endpoint, replay, rotation, Web UI");

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void payloadsAreEncryptedAtRest() throws Exception {
    String missing = HeadlessChromium.missing();
    ev.check(missing == null, missing == null ? "headless Chromium and chromedriver installed" : missing);
    ev.check(stack.devServer(), "runs on the dev server (its stored history, CLI and Web UI)");

    // 1. an order with a note, paid, under key k1
    stack.sku(SKU, 10, 3);
    HttpJson ada = stack.api.login("t1", SUBJECT);
    Map<String, Object> body = Buyers.order("x32-1", SKU, 1);
    body.put("note", NOTE);
    HttpJson.Reply created = ada.post("/orders", body);
    ev.equal(201, created.status(), "the order with a note is created");
    String order = created.text("order_id");
    ev.note("pay answered " + Buyers.pay(ada, order).text("status"));
    stack.awaitStatus(order, "PAID", 60_000);
    String wf = workflowId(order);
    ev.note("order " + order + " workflow " + wf);

    // 2. the stored history through the real CLI: no subject, no note in any payload
    JsonNode history = show(wf, null, null);
    List<Found> payloads = payloads(history, "");
    List<Found> sealed = payloads.stream().filter(p -> !p.indexed()).toList();
    ev.note(payloads.size() + " payloads in the history, " + sealed.size() + " outside the search attributes and the SDK's marker bookkeeping;"
        + " encodings " + encodings(payloads));
    ev.note("payloads not encrypted: " + payloads.stream().filter(p -> !"binary/encrypted".equals(p.meta("encoding")))
        .map(p -> p.path().replaceAll("\\[\\d+\\]", "[]") + " " + new String(p.data(), StandardCharsets.UTF_8))
        .distinct().toList());
    ev.check(!sealed.isEmpty(), "the history has payloads outside the search attributes");
    ev.check(sealed.stream().allMatch(p -> "binary/encrypted".equals(p.meta("encoding")) && "k1".equals(
        p.meta(PayloadEncryption.KEY_ID))), "every payload but the search attributes, the SDK's marker bookkeeping and the tracing header is binary/encrypted, key id k1");
    ev.check(payloads.stream().noneMatch(p -> p.plain().contains(SUBJECT) || p.plain().contains(NOTE)),
        "no payload of the stored history holds the subject or the note");
    String raw = history.toString();
    ev.check(!raw.contains(NOTE) && !raw.contains("gift wrap"), "the note appears nowhere in the stored history");
    ev.note("the subject appears in clear only where the workflow id is: " + occurrences(raw, SUBJECT)
        + " times, all inside " + wf + ": " + (occurrences(raw, SUBJECT) == occurrences(raw, wf)));
    ev.equal(occurrences(raw, wf), occurrences(raw, SUBJECT),
        "every clear occurrence of the subject is the workflow id (order:tenant:subject:key), no payload");

    // 3. the codec endpoint decodes the same payloads: subject and note are back
    String decoded = codec("decode", sealed, null, null).body();
    ev.check(decoded.contains(SUBJECT) && decoded.contains(NOTE),
        "the codec endpoint decodes the stored payloads: subject and note readable");
    ev.check(decoded.contains(b64("json/plain")), "decoded payloads say json/plain again");
    String viaCli = spelled(show(wf, codecUrl(), null));
    ev.check(viaCli.contains(NOTE) && SUBJECT_FIELD.matcher(viaCli).find(),
        "temporal workflow show --codec-endpoint shows subject and note");
    codecDoor();

    // 4. the replay gate replays the encrypted history with the keys, and cannot without them
    var service = stack.wiring.temporal().service();
    String query = "WorkflowType = 'OrderWorkflow'";
    stack.awaitTrue(() -> ReplayGate.fromEngine(service, "default", query, 50).histories().size() == 1, 15_000,
        "visibility lists the order workflow");
    ReplayGate.Report withKeys = new ReplayGate().decodingWith(codecOf(Map.of("k1", K1), "k1").dataConverter())
        .replayEngine(service, "default", query, 50);
    ev.note("replay with k1: " + withKeys.summary());
    ev.check(withKeys.historiesRead() == 1 && withKeys.failures().isEmpty(), "the replay gate replays it with key k1");
    ReplayGate.Report without = new ReplayGate().replayEngine(service, "default", query, 50);
    ev.note("replay without keys: " + without.summary()
        + without.failures().stream().map(ReplayGate.Outcome::line).toList());
    ev.equal(1, without.failures().size(), "without the keys the same history does not replay (negative control)");

    // 5. the Web UI with the codec endpoint shows the decoded input
    String uiWithCodec = uiInput(wf, "x32-ui-with-codec.png", true);
    ev.check(SUBJECT_FIELD.matcher(uiWithCodec).find(), "the Web UI with the codec endpoint shows the decoded subject");
    ev.check(uiWithCodec.contains(NOTE), "and, its update event opened, the decoded note");
    ev.check(uiWithCodec.contains("for t1/" + SUBJECT), "and the decoded static summary");

    // 6. rotation: k2 seals, k1 still opens
    stack.stop();
    stack.with("temporal.payloadEncryption.activeKeyId", "k2").with("temporal.payloadEncryption.keys.k2", K2);
    stack.start();
    HttpJson bob = stack.api.login("t1", SUBJECT_2);
    Map<String, Object> second = Buyers.order("x32-2", SKU, 1);
    second.put("note", NOTE + " (2)");
    String order2 = bob.post("/orders", second).text("order_id");
    ev.note("second order pay answered " + Buyers.pay(bob, order2).text("status"));
    stack.awaitStatus(order2, "PAID", 60_000);
    String wf2 = workflowId(order2);
    List<Found> sealed2 = payloads(show(wf2, null, null), "").stream().filter(p -> !p.indexed()).toList();
    ev.check(!sealed2.isEmpty() && sealed2.stream().allMatch(p -> "k2".equals(p.meta(PayloadEncryption.KEY_ID))),
        "after the rotation new payloads are sealed with k2");
    List<Found> old = payloads(show(wf, null, null), "").stream().filter(p -> !p.indexed()).toList();
    ev.check(old.stream().allMatch(p -> "k1".equals(p.meta(PayloadEncryption.KEY_ID))), "the old history still says k1");
    String oldDecoded = codec("decode", old, null, null).body();
    ev.check(oldDecoded.contains(SUBJECT) && oldDecoded.contains(NOTE),
        "the rotated service's codec endpoint still decodes the k1 history");
    stack.awaitTrue(() -> ReplayGate.fromEngine(service(), "default", query, 50).histories().size() == 2, 15_000,
        "visibility lists both order workflows");
    ReplayGate.Report rotated = new ReplayGate()
        .decodingWith(codecOf(Map.of("k1", K1, "k2", K2), "k2").dataConverter())
        .replayEngine(service(), "default", query, 50);
    ev.note("replay with k1+k2: " + rotated.summary());
    ev.check(rotated.historiesRead() == 2 && rotated.failures().isEmpty(), "the replay gate replays both (k1 and k2)");
    PayloadEncryption k2Only = codecOf(Map.of("k2", K2), "k2");
    String refusal = "";
    try {
      k2Only.decode(List.of(old.get(0).payload()));
    } catch (PayloadCodecException e) {
      refusal = e.getMessage();
    }
    ev.note("a codec without k1: " + refusal);
    ev.check(refusal.contains("key id 'k1', which is not configured"), "a codec that dropped k1 refuses the old payload by its key id");

    stack.awaitNoticesApplied(2, 30_000);
    stack.checkReconcileClean(ev, "reconcile clean (both orders paid once)");

    // 7. the operator's credential, and the Web UI without the codec endpoint
    stack.stop();
    stack.with("auth.adminToken", ADMIN_TOKEN).with("temporal.payloadEncryption.devServerUiCodec", false);
    stack.start();
    HttpResponse<String> anonymous = codec("decode", old, null, null);
    ev.note("codec without the credential: " + anonymous.statusCode() + " " + anonymous.body());
    ev.equal(401, anonymous.statusCode(), "with an admin token set the codec endpoint needs it");
    HttpResponse<String> operator = codec("decode", old, ADMIN_TOKEN, null);
    ev.check(operator.statusCode() == 200 && operator.body().contains(NOTE), "with the credential it decodes");
    String cliWithAuth = spelled(show(wf, codecUrl(), "Bearer " + ADMIN_TOKEN));
    ev.check(cliWithAuth.contains(NOTE), "temporal workflow show --codec-auth 'Bearer <admin token>' decodes");
    String uiWithout = uiInput(wf, "x32-ui-without-codec.png", false);
    ev.check(!SUBJECT_FIELD.matcher(uiWithout).find() && !uiWithout.contains(NOTE),
        "the Web UI without a codec endpoint shows neither the subject field nor the note");
    ev.check(!uiWithout.contains("for t1/" + SUBJECT), "nor the static summary (a payload too) with the subject");
  }

  /** The codec's own door: preflight for the UI's origin only, JSON only. */
  private static void codecDoor() throws Exception {
    String url = codecUrl() + "/decode";
    HttpResponse<String> preflight = HTTP.send(HttpRequest.newBuilder(URI.create(url))
        .method("OPTIONS", HttpRequest.BodyPublishers.noBody()).header("Origin", stack.webUi())
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type,x-namespace").build(), HttpResponse.BodyHandlers.ofString());
    ev.note("preflight from " + stack.webUi() + ": " + preflight.statusCode() + " allow-origin "
        + preflight.headers().firstValue("Access-Control-Allow-Origin").orElse("-"));
    ev.check(preflight.statusCode() == 204 && stack.webUi().equals(
        preflight.headers().firstValue("Access-Control-Allow-Origin").orElse("")), "the Web UI's preflight is allowed");
    HttpResponse<String> foreign = HTTP.send(HttpRequest.newBuilder(URI.create(url))
        .method("OPTIONS", HttpRequest.BodyPublishers.noBody()).header("Origin", "http://evil.example")
        .header("Access-Control-Request-Method", "POST").build(), HttpResponse.BodyHandlers.ofString());
    ev.equal(403, foreign.statusCode(), "a preflight from another origin is refused");
    HttpResponse<String> form = HTTP.send(HttpRequest.newBuilder(URI.create(url))
        .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("{\"payloads\":[]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    ev.equal(415, form.statusCode(), "a non-JSON body (what a page may send without preflight) is refused");
  }

  /** Opens the workflow's page in headless Chromium and answers its text once the input is shown. */
  private static String uiInput(String wf, String shot, boolean expectDecoded) throws Exception {
    try (HeadlessChromium browser = HeadlessChromium.start(1600, 1400)) {
      String url = stack.webUi() + "/namespaces/default/workflows/"
          + URLEncoder.encode(wf, StandardCharsets.UTF_8).replace("+", "%20");
      browser.open(url);
      if (expectDecoded) {
        browser.awaitText(t -> SUBJECT_FIELD.matcher(t).find(), 90_000, 15_000);
      } else {
        browser.awaitText(t -> t.contains(wf) && t.contains("Input"), 90_000, 15_000);
      }
      // the history's rows may render after the summary: wait for the update events themselves
      browser.awaitText(t -> UPDATE_ACCEPTED.matcher(t).find(), 60_000, 15_000);
      // the note is the create update's argument: open the history's update events to show it
      JsonNode clicked = browser.script("const hits=[...document.querySelectorAll('*')].filter(e =>"
          + " e.children.length===0 && /Update ?Accepted/i.test(e.textContent||''));"
          + " hits.forEach(e => { try { e.click(); } catch (x) {} }); return hits.length;");
      // without a codec the page had its time to decode, were it able to
      String text = browser.awaitText(t -> t.contains(NOTE), expectDecoded ? 30_000 : 8_000, 0);
      ev.check(clicked.asInt() > 0, "the page lists the update events, opened to show their input (" + clicked + ")");
      ev.note("note on the page: " + text.contains(NOTE));
      browser.screenshot(Path.of("target", "webui-x32", shot)); // beside, not in, X-10's published folder
      ev.note("Web UI " + url + " (" + (expectDecoded ? "codec endpoint " + codecUrl() : "no codec endpoint")
          + "): input shown as: " + around(text, "Input", 300));
      return text;
    }
  }

  private static String codecUrl() {
    return "http://127.0.0.1:" + stack.adminPort() + "/codec";
  }

  private static com.google.protobuf.util.JsonFormat.Parser parser() {
    return com.google.protobuf.util.JsonFormat.parser().ignoringUnknownFields();
  }

  /** temporal workflow show --output json, optionally through the codec endpoint. */
  private static JsonNode show(String wf, String codecEndpoint, String codecAuth) throws Exception {
    List<String> args = new ArrayList<>(List.of("workflow", "show", "--workflow-id", wf, "--output", "json"));
    if (codecEndpoint != null) args.addAll(List.of("--codec-endpoint", codecEndpoint));
    if (codecAuth != null) args.addAll(List.of("--codec-auth", codecAuth));
    TemporalCliProcess.Result r = TemporalCliProcess.run(stack, args.toArray(new String[0]));
    ev.equal(0, r.exit(), "temporal " + String.join(" ", args.subList(0, 4)) + (codecEndpoint != null
        ? " --codec-endpoint" : "") + " exits 0");
    return HttpJson.JSON.readTree(r.output().substring(r.output().indexOf('{')));
  }

  /** A payload of the history: where it is, its metadata and its data as stored. */
  record Found(String path, Map<String, String> metadata, byte[] data) {
    /**
     * Clear by design: search attributes (the engine indexes them) and the SDK's own marker
     * bookkeeping (local activity id, type, time and attempt; a version marker's change id and
     * version), which the SDK writes with its default converter; a local activity's result
     * ({@code details.data}) is encrypted; the tracing header (a traceparent, ids only), which the
     * tracing interceptor writes with its own converter.
     */
    boolean indexed() {
      return path.contains("indexedFields") || MARKER_BOOKKEEPING.matcher(path).find()
          || path.endsWith("header.fields._tracer-data");
    }

    String meta(String key) {
      return metadata.get(key);
    }

    String plain() {
      return new String(data, StandardCharsets.UTF_8) + metadata;
    }

    Payload payload() {
      Payload.Builder b = Payload.newBuilder().setData(com.google.protobuf.ByteString.copyFrom(data));
      metadata.forEach((k, v) -> b.putMetadata(k, com.google.protobuf.ByteString.copyFromUtf8(v)));
      return b.build();
    }
  }

  /** Every payload object ({@code metadata} and {@code data}, both base64) in the CLI's JSON. */
  static List<Found> payloads(JsonNode node, String path) {
    List<Found> out = new ArrayList<>();
    if (node.isObject()) {
      if (node.has("metadata") && node.get("metadata").isObject() && node.get("metadata").has("encoding")) {
        Map<String, String> meta = new LinkedHashMap<>();
        node.get("metadata").fields().forEachRemaining(e -> meta.put(e.getKey(), unb64(e.getValue().asText())));
        out.add(new Found(path, meta, node.has("data") ? Base64.getDecoder().decode(node.get("data").asText())
            : new byte[0]));
        return out;
      }
      node.fields().forEachRemaining(e -> out.addAll(payloads(e.getValue(), path + "." + e.getKey())));
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) out.addAll(payloads(node.get(i), path + "[" + i + "]"));
    }
    return out;
  }

  private static Map<String, Long> encodings(List<Found> payloads) {
    Map<String, Long> out = new java.util.TreeMap<>();
    for (Found p : payloads) out.merge((p.indexed() ? "clear by design " : "") + p.meta("encoding"), 1L, Long::sum);
    return out;
  }

  /** POST {codec}/{op} with the payloads, as the Web UI sends it. */
  private static HttpResponse<String> codec(String op, List<Found> payloads, String token, String origin)
      throws Exception {
    ObjectNode req = HttpJson.JSON.createObjectNode();
    ArrayNode list = req.putArray("payloads");
    for (Found p : payloads) {
      ObjectNode o = list.addObject();
      ObjectNode meta = o.putObject("metadata");
      p.metadata().forEach((k, v) -> meta.put(k, b64(v)));
      o.put("data", Base64.getEncoder().encodeToString(p.data()));
    }
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(codecUrl() + "/" + op))
        .header("Content-Type", "application/json").header("X-Namespace", "default")
        .POST(HttpRequest.BodyPublishers.ofString(req.toString()));
    if (token != null) b.header("Authorization", "Bearer " + token);
    if (origin != null) b.header("Origin", origin);
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) return r;
    // the decoded payloads' data is base64 JSON: spell it out, so a check can read it
    return new Spelled(r, spelled(HttpJson.JSON.readTree(r.body())));
  }

  /** The JSON's text and, after it, the data of every payload in it decoded from base64. */
  private static String spelled(JsonNode json) {
    StringBuilder text = new StringBuilder(json.toString());
    for (Found p : payloads(json, "")) text.append('\n').append(new String(p.data(), StandardCharsets.UTF_8));
    return text.toString();
  }

  /** A response whose body also carries its payloads' data decoded from base64. */
  private record Spelled(HttpResponse<String> r, String body) implements HttpResponse<String> {
    public int statusCode() {
      return r.statusCode();
    }

    public HttpRequest request() {
      return r.request();
    }

    public java.util.Optional<HttpResponse<String>> previousResponse() {
      return r.previousResponse();
    }

    public java.net.http.HttpHeaders headers() {
      return r.headers();
    }

    public java.util.Optional<javax.net.ssl.SSLSession> sslSession() {
      return r.sslSession();
    }

    public URI uri() {
      return r.uri();
    }

    public HttpClient.Version version() {
      return r.version();
    }
  }

  private static io.temporal.serviceclient.WorkflowServiceStubs service() {
    return stack.wiring.temporal().service();
  }

  private static PayloadEncryption codecOf(Map<String, String> keys, String active) {
    return PayloadEncryption.fromHex(keys, active);
  }

  private static String workflowId(String orderId) {
    return stack.sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
  }

  private static int occurrences(String text, String fragment) {
    int n = 0;
    for (int i = text.indexOf(fragment); i >= 0; i = text.indexOf(fragment, i + 1)) n++;
    return n;
  }

  private static String around(String text, String anchor, int chars) {
    int i = text.indexOf(anchor);
    if (i < 0) return "(no \"" + anchor + "\" on the page)";
    return text.substring(i, Math.min(text.length(), i + chars)).replace('\n', ' ');
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String unb64(String s) {
    try {
      return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  private static String randomKey() {
    byte[] key = new byte[32];
    new SecureRandom().nextBytes(key);
    return HexFormat.of().formatHex(key);
  }
}
