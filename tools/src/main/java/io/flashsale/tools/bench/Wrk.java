package io.flashsale.tools.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * wrk (its own process, a few threads, an event loop per thread) as the light load generator of
 * the floors: its CPU per request is far below the server's, so what it measures is the server.
 * A Lua script makes every create key distinct and counts the answers by status.
 */
public final class Wrk {
  /**
   * What one wrk run saw: requests, per-status counts (of the other statuses, {@code busy} were
   * 503), socket errors, latency percentiles, its duration, and {@code past2s}: the requests
   * answered after more than 2 s (from wrk's latency histogram) plus those it gave up on (its
   * timeout; 2 s unless the run set a longer one, {@link #create(String, List, String, int, int, int, int)}).
   */
  public record Result(long requests, long expectedStatus, long otherStatus, long socketErrors, double seconds,
      double p50Ms, double p99Ms, double cpuSeconds, long busy, long past2s) {
    public double rate() {
      return seconds > 0 ? expectedStatus / seconds : Double.NaN;
    }
  }

  static final String RESULT_PREFIX = "WRK-RESULT ";
  static final String TIMES_PREFIX = "WRK-TIMES";

  private Wrk() {}

  public static boolean onPath() {
    String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
    for (String dir : path.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "wrk"))) return true;
    }
    return false;
  }

  /** GET {@code url}: every answer must be {@code expected}. */
  public static Process get(String url, int expected, int connections, int seconds) throws IOException {
    return start(url, script(null, expected), connections, seconds);
  }

  /**
   * POST /orders at {@code apiUrl} for {@code sku}, a fresh request key each time, the buyers of
   * {@code tokens} in turn (a crowd, not one buyer); every answer must be {@code expected}.
   */
  public static Process create(String apiUrl, List<String> tokens, String sku, int expected, int connections, int seconds)
      throws IOException {
    return start(apiUrl + "/orders", script(new Create(tokens, sku), expected), connections, seconds);
  }

  /**
   * The same, waiting up to {@code timeoutSeconds} for each answer instead of wrk's 2 s, so a late
   * answer is counted once, in {@code past2s}, with its status (wrk counts a connection past its
   * timeout again at each check).
   */
  public static Process create(String apiUrl, List<String> tokens, String sku, int expected, int connections, int seconds,
      int timeoutSeconds) throws IOException {
    return start(apiUrl + "/orders", script(new Create(tokens, sku), expected), connections, seconds,
        List.of("--timeout", timeoutSeconds + "s"));
  }

  record Create(List<String> tokens, String sku) {
    Create {
      if (tokens.isEmpty()) throw new IllegalArgumentException("no buyer to send as");
    }
  }

  /** One signed callback: its body and its X-Channel-Signature header (null: the service checks none). */
  public record SignedCallback(String body, String signature) {
    /** Signed as the channel signs at {@code epochSeconds}; unsigned when the service has no secret. */
    public static SignedCallback of(String body, String secret, long epochSeconds) {
      return new SignedCallback(body, secret == null || secret.isBlank() ? null
          : io.flashsale.paymentchannel.CallbackSignatures.header(secret, epochSeconds,
              body.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }
  }

  /**
   * POST {@code callbacks} to /callbacks/payment at {@code apiUrl}, each thread cycling through
   * them from its own offset; every answer must be {@code expected}.
   */
  public static Process callbacks(String apiUrl, List<SignedCallback> callbacks, int expected, int connections,
      int seconds) throws IOException {
    return start(apiUrl + "/callbacks/payment", callbackScript(callbacks, expected), connections, seconds);
  }

  /**
   * Each callback of the list sent once, in the list's order (the threads take turns), then wrk
   * stops; {@code maxSeconds} bounds it. A connection that asks for a request after the list ran
   * out sends the list's last callback again before its thread stops, so a few copies more arrive
   * than the list holds: count arrivals where they are recorded, not here.
   */
  public static Process callbacksOnce(String apiUrl, List<SignedCallback> callbacks, int expected, int connections,
      int maxSeconds) throws IOException {
    // a callback the service takes long over is measured, not cut at wrk's default 2 s
    return start(apiUrl + "/callbacks/payment", callbackOnceScript(callbacks, expected, threads(connections)),
        connections, maxSeconds, List.of("--timeout", "10s"));
  }

  /** SIGINT to the wrk under {@code p} (its shell's child): wrk stops and prints its summary. */
  public static void interrupt(Process p) throws IOException, InterruptedException {
    for (ProcessHandle h : p.toHandle().descendants().toList()) {
      if (h.info().command().map(c -> c.endsWith("/wrk")).orElse(false)) {
        new ProcessBuilder("kill", "-INT", String.valueOf(h.pid())).inheritIO().start().waitFor();
      }
    }
  }

  private static int threads(int connections) {
    return Math.min(2, connections);
  }

  private static Process start(String url, String lua, int connections, int seconds) throws IOException {
    return start(url, lua, connections, seconds, List.of());
  }

  private static Process start(String url, String lua, int connections, int seconds, List<String> options)
      throws IOException {
    Path script = Files.createTempFile("flashsale-wrk-", ".lua");
    Files.writeString(script, lua);
    script.toFile().deleteOnExit();
    // bash's `times` after wrk: the CPU wrk used (user, system), read after it exited
    List<String> cmd = new ArrayList<>(List.of("bash", "-c", "wrk \"$@\"; s=$?; echo " + TIMES_PREFIX + "; times; exit $s",
        "wrk", "-t" + threads(connections), "-c" + connections, "-d" + seconds + "s", "--latency"));
    cmd.addAll(options);
    cmd.addAll(List.of("-s", script.toString(), url));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("LC_ALL", "C"); // `times` with a decimal point, whatever the locale
    return pb.start();
  }

  /** Waits for the run and reads its result line. */
  public static Result finish(Process p) throws IOException, InterruptedException {
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int code = p.waitFor();
    return parse(out).orElseThrow(() -> new IOException("wrk exit " + code + " printed no result: " + out.strip()));
  }

  static Optional<Result> parse(String output) {
    Matcher m = Pattern.compile(Pattern.quote(RESULT_PREFIX)
        + "(\\d+) (\\d+) (\\d+) (\\d+) ([0-9.]+) ([0-9.]+) ([0-9.]+) (\\d+) (\\d+)").matcher(output);
    if (!m.find()) return Optional.empty();
    return Optional.of(new Result(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
        Long.parseLong(m.group(4)), Double.parseDouble(m.group(5)), Double.parseDouble(m.group(6)),
        Double.parseDouble(m.group(7)), childCpuSeconds(output), Long.parseLong(m.group(8)), Long.parseLong(m.group(9))));
  }

  /** The children's line of bash's `times` (the second after the marker): user + system seconds; NaN if absent. */
  static double childCpuSeconds(String output) {
    int at = output.lastIndexOf(TIMES_PREFIX);
    if (at < 0) return Double.NaN;
    String[] lines = output.substring(at).strip().split("\\R");
    if (lines.length < 3) return Double.NaN;
    Matcher t = Pattern.compile("(\\d+)m([0-9.]+)s\\s+(\\d+)m([0-9.]+)s").matcher(lines[2]);
    if (!t.find()) return Double.NaN;
    return 60 * Double.parseDouble(t.group(1)) + Double.parseDouble(t.group(2)) + 60 * Double.parseDouble(t.group(3))
        + Double.parseDouble(t.group(4));
  }

  /** The Lua of the callbacks: the bodies and their signatures in two tables, taken in turn. */
  static String callbackScript(List<SignedCallback> callbacks, int expected) {
    return callbackTables(callbacks)
        .append("function request()\n  format_all()\n"
            + "  n = n + 1\n  return formatted[(n + tid * 7) % #formatted + 1]\nend\n")
        .append(counters(expected)).toString();
  }

  /** The same tables; thread {@code tid} of {@code threads} sends entries tid+1, tid+1+threads, ... once. */
  static String callbackOnceScript(List<SignedCallback> callbacks, int expected, int threads) {
    return callbackTables(callbacks)
        .append(String.format(Locale.ROOT, "function request()\n  format_all()\n"
            + "  local i = tid + 1 + n * %d\n  n = n + 1\n"
            + "  if i > #formatted then\n    wrk.thread:stop()\n    i = #formatted\n  end\n"
            + "  return formatted[i]\nend\n", threads))
        .append(counters(expected)).toString();
  }

  private static StringBuilder callbackTables(List<SignedCallback> callbacks) {
    if (callbacks.isEmpty()) throw new IllegalArgumentException("no callback to send");
    StringBuilder s = new StringBuilder(prelude());
    s.append("local bodies = {\n");
    for (SignedCallback c : callbacks) s.append("  '").append(luaJson(c.body())).append("',\n");
    s.append("}\nlocal signatures = {\n");
    for (SignedCallback c : callbacks) s.append("  '").append(signature(c.signature())).append("',\n");
    s.append("}\n");
    // each request formatted once, in the first request of each thread; then only picked
    s.append("local formatted = nil\n");
    s.append("function format_all()\n  if formatted ~= nil then return end\n  formatted = {}\n"
        + "  for i, b in ipairs(bodies) do\n    local headers = { ['Content-Type'] = 'application/json' }\n"
        + "    if signatures[i] ~= '' then headers['X-Channel-Signature'] = signatures[i] end\n"
        + "    formatted[i] = wrk.format('POST', nil, headers, b)\n  end\nend\n");
    return s;
  }

  /** The Lua: per-thread counters, summed over the threads in done(). */
  static String script(Create create, int expected) {
    StringBuilder s = new StringBuilder(prelude());
    if (create != null) {
      // one headers table per buyer, made once; thread tid starts at its own offset and goes round
      s.append("local tokens = {\n");
      for (String token : create.tokens()) s.append("  '").append(lua(token)).append("',\n");
      s.append("}\nlocal headers = {}\nfor i, t in ipairs(tokens) do\n"
          + "  headers[i] = { ['Content-Type'] = 'application/json', ['Authorization'] = 'Bearer ' .. t }\nend\n");
      s.append(String.format(Locale.ROOT, "function request()\n  n = n + 1\n"
          + "  local buyer = headers[(n + tid * 7919) %% #headers + 1]\n"
          + "  return wrk.format('POST', nil, buyer, '{\"request_key\":\"' .. prefix .. '-' .. n .. '\","
          + "\"sku\":\"%s\",\"quantity\":1}')\nend\n", lua(create.sku())));
    }
    return s.append(counters(expected)).toString();
  }

  private static String prelude() {
    return "local threads = {}\nlocal next_id = 0\n"
        + "function setup(thread)\n  thread:set('tid', next_id)\n  next_id = next_id + 1\n"
        + "  table.insert(threads, thread)\nend\n"
        + "function init(args)\n  n = 0\n  ok = 0\n  other = 0\n  busy = 0\n  prefix = 'wrk-' .. os.time() .. '-' .. tid\nend\n";
  }

  private static String counters(int expected) {
    StringBuilder s = new StringBuilder();
    s.append(String.format(Locale.ROOT, "function response(status, headers, body)\n"
        + "  if status == %d then ok = ok + 1 else other = other + 1 end\n"
        + "  if status == 503 then busy = busy + 1 end\nend\n", expected));
    s.append("function done(summary, latency, requests)\n  local o, x, b = 0, 0, 0\n"
        + "  for _, t in ipairs(threads) do o = o + t:get('ok'); x = x + t:get('other'); b = b + t:get('busy') end\n"
        + "  local e = summary.errors\n"
        // the share answered after 2 s: the highest percentile (in steps of 0.01) still within 2 s (wrk's
        // percentile(100) is 0, so from 99.99)
        + "  local slow = 0\n  if latency.max > 2000000 then\n    local p = 99.99\n"
        + "    while p > 0 and latency:percentile(p) > 2000000 do p = p - 0.01 end\n"
        + "    slow = math.floor((100 - p) / 100 * summary.requests + 0.5)\n  end\n"
        + "  io.write(string.format('" + RESULT_PREFIX + "%d %d %d %d %.3f %.3f %.3f %d %d\\n', summary.requests, o, x,"
        + " e.connect + e.read + e.write + e.timeout, summary.duration / 1e6, latency:percentile(50) / 1e3,"
        + " latency:percentile(99) / 1e3, b, slow + e.timeout))\nend\n");
    return s.toString();
  }

  /** A JSON body inside a single-quoted Lua string: only what a callback of ids and numbers holds. */
  private static String luaJson(String v) {
    if (!v.matches("[A-Za-z0-9._:,\"{}\\[\\] -]*")) throw new IllegalArgumentException("not a plain callback body: " + v);
    return v;
  }

  private static String signature(String v) {
    if (v == null) return "";
    if (!v.matches("t=[0-9]{1,12},v1=[0-9a-f]{64}")) throw new IllegalArgumentException("not a signature header: " + v);
    return v;
  }

  /** A value inside a single-quoted Lua string: only what a token or SKU name may hold. */
  private static String lua(String v) {
    if (!v.matches("[A-Za-z0-9._~+/=:-]*")) throw new IllegalArgumentException("not a plain token or name: " + v);
    return v;
  }
}
