package io.flashsale.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A real headless Chromium (the Debian {@code chromium} package), driven through the Debian
 * {@code chromedriver}'s W3C WebDriver HTTP protocol with java.net.http: open a URL, read the
 * rendered text (the page and its same-origin iframes), list links, take a screenshot.
 *
 * <p>Why WebDriver and not {@code chromium --dump-dom --virtual-time-budget}: the Web UI's
 * workflow page long-polls the history of a running workflow, virtual time never advances past a
 * pending request, and {@code --dump-dom} then never returns. WebDriver lets the experiment poll
 * the page until the data it waits for is there, with a bound.
 *
 * <p>Nothing here downloads a browser: a missing binary is an {@link AssertionError} that says
 * what to install (./flashsale test installs both packages).
 */
final class HeadlessChromium implements AutoCloseable {
  static final String INSTALL_HINT = "apt-get install -y chromium chromium-driver";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The page's text as a user sees it, plus the text of each same-origin iframe (the UI renders metadata in iframes). */
  private static final String TEXT_SCRIPT = String.join("\n",
      "var parts = [document.body ? document.body.innerText : ''];",
      "document.querySelectorAll('iframe').forEach(function (f) {",
      "  try { var d = f.contentDocument; if (d && d.body) parts.push('[iframe] ' + d.body.innerText); } catch (e) {}",
      "});",
      "return parts.join('\\n');");

  private final Process driver;
  private final Path profile;
  private final Path log;
  private final String base;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private String session;
  private String version = "?";

  private HeadlessChromium(Process driver, Path profile, Path log, int port) {
    this.driver = driver;
    this.profile = profile;
    this.log = log;
    this.base = "http://127.0.0.1:" + port;
  }

  /** The browser binary: system property flashsale.chromium, else /usr/bin/chromium, else on PATH. */
  static Path chromium() {
    return find("flashsale.chromium", "chromium", "chromium-browser");
  }

  /** The driver binary: system property flashsale.chromedriver, else /usr/bin/chromedriver, else on PATH. */
  static Path chromedriver() {
    return find("flashsale.chromedriver", "chromedriver");
  }

  /** Null when both binaries are there; otherwise what is missing and how to install it. */
  static String missing() {
    List<String> gone = new ArrayList<>();
    if (chromium() == null) gone.add("chromium (looked at " + where("flashsale.chromium", "/usr/bin/chromium") + ")");
    if (chromedriver() == null) {
      gone.add("chromedriver (looked at " + where("flashsale.chromedriver", "/usr/bin/chromedriver") + ")");
    }
    return gone.isEmpty() ? null
        : "no headless browser: " + String.join(" and ", gone) + " not installed; run " + INSTALL_HINT
            + " (./flashsale test does it)";
  }

  private static String where(String property, String usual) {
    String explicit = System.getProperty(property);
    return explicit != null && !explicit.isBlank() ? property + "=" + explicit : usual + " and PATH";
  }

  private static Path find(String property, String... names) {
    String explicit = System.getProperty(property);
    if (explicit != null && !explicit.isBlank()) {
      Path p = Path.of(explicit);
      return Files.isExecutable(p) ? p : null;
    }
    for (String name : names) {
      Path p = Path.of("/usr/bin", name);
      if (Files.isExecutable(p)) return p;
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      for (String name : names) {
        if (dir.isBlank()) continue;
        Path p = Path.of(dir, name);
        if (Files.isExecutable(p)) return p;
      }
    }
    return null;
  }

  /**
   * Starts chromedriver on a port of its choosing and one headless Chromium session with a fresh
   * profile and the given window size. Fails (never skips) when a binary is missing.
   */
  static HeadlessChromium start(int width, int height) throws IOException, InterruptedException {
    String missing = missing();
    if (missing != null) throw new AssertionError(missing);
    Path profile = Files.createTempDirectory("x10-chromium-");
    Path log = profile.resolveSibling(profile.getFileName() + ".chromedriver.log");
    Process driver = new ProcessBuilder(chromedriver().toString(), "--port=0", "--log-path=" + log)
        .redirectErrorStream(true).start();
    CompletableFuture<Integer> port = new CompletableFuture<>();
    StringBuilder banner = new StringBuilder();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(driver.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          synchronized (banner) {
            if (banner.length() < 4000) banner.append(line).append('\n');
          }
          java.util.regex.Matcher m = java.util.regex.Pattern.compile("started successfully on port (\\d+)").matcher(line);
          if (m.find()) port.complete(Integer.parseInt(m.group(1)));
        }
      } catch (IOException ignored) {
        // the process went away
      }
      port.completeExceptionally(new IOException("chromedriver exited"));
    }, "chromedriver-output");
    reader.setDaemon(true);
    reader.start();
    HeadlessChromium browser;
    try {
      browser = new HeadlessChromium(driver, profile, log, port.get(60, TimeUnit.SECONDS));
    } catch (Exception e) {
      driver.destroyForcibly();
      synchronized (banner) {
        throw new AssertionError("chromedriver did not start within 60 s: " + e + "\n" + banner, e);
      }
    }
    try {
      browser.awaitReady(60_000);
      browser.newSession(width, height);
    } catch (RuntimeException | Error | IOException | InterruptedException e) {
      browser.close();
      throw e;
    }
    return browser;
  }

  private void awaitReady(long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      try {
        if (call("GET", "/status", null, 10).path("value").path("ready").asBoolean(false)) return;
      } catch (RuntimeException | IOException notYet) {
        // keep polling
      }
      Thread.sleep(200);
    }
    throw new AssertionError("chromedriver not ready within " + timeoutMs + " ms" + logTail());
  }

  private void newSession(int width, int height) throws IOException, InterruptedException {
    List<String> args = List.of("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
        "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--force-device-scale-factor=1",
        "--lang=en-US", "--user-data-dir=" + profile, "--window-size=" + width + "," + height);
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("binary", chromium().toString());
    options.put("args", args);
    Map<String, Object> always = new LinkedHashMap<>();
    always.put("browserName", "chrome");
    always.put("pageLoadStrategy", "normal");
    always.put("timeouts", Map.of("pageLoad", 90_000, "script", 30_000, "implicit", 0));
    always.put("goog:chromeOptions", options);
    JsonNode reply = call("POST", "/session", Map.of("capabilities", Map.of("alwaysMatch", always)), 180);
    session = reply.path("value").path("sessionId").asText(null);
    if (session == null) throw new AssertionError("no WebDriver session: " + reply + logTail());
    version = reply.path("value").path("capabilities").path("browserVersion").asText("?");
  }

  /** The browser's version, as the session reports it (e.g. 156.0.8078.108). */
  String version() {
    return "Chromium " + version;
  }

  /**
   * Navigates and waits for the load event (bounded by the page-load timeout); a page that does
   * not finish loading in time is left as it is, for the caller's polling to judge.
   */
  void open(String url) throws IOException, InterruptedException {
    JsonNode reply = send("POST", "/session/" + session + "/url", Map.of("url", url), 150);
    String error = reply.path("value").path("error").asText("");
    if (!error.isEmpty() && !error.equals("timeout")) {
      throw new AssertionError("navigate to " + url + ": " + reply);
    }
  }

  void refresh() throws IOException, InterruptedException {
    send("POST", "/session/" + session + "/refresh", Map.of(), 150);
  }

  String currentUrl() throws IOException, InterruptedException {
    return call("GET", "/session/" + session + "/url", null, 60).path("value").asText();
  }

  /** Runs a synchronous script in the page; its return value as JSON. */
  JsonNode script(String js) throws IOException, InterruptedException {
    return call("POST", "/session/" + session + "/execute/sync", Map.of("script", js, "args", List.of()), 60)
        .path("value");
  }

  /** The rendered text: the page's innerText and its same-origin iframes' ("[iframe] ..."). */
  String text() throws IOException, InterruptedException {
    return script(TEXT_SCRIPT).asText("");
  }

  /** The href attributes (as written in the page) of the links whose href contains the fragment. */
  List<String> links(String fragment) throws IOException, InterruptedException {
    List<String> out = new ArrayList<>();
    JsonNode all = script("return Array.from(document.querySelectorAll('a[href]')).map(function (a) {"
        + " return a.getAttribute('href'); })");
    for (JsonNode n : all) {
      String h = n.asText();
      if (h.contains(fragment) && !out.contains(h)) out.add(h);
    }
    return out;
  }

  /**
   * Polls the rendered text until it satisfies the condition or the time is up; reloads the page
   * every reloadEveryMs (0: never) in case it rendered before the data was there. The last text.
   */
  String awaitText(Predicate<String> condition, long timeoutMs, long reloadEveryMs)
      throws IOException, InterruptedException {
    long start = System.currentTimeMillis();
    long deadline = start + timeoutMs;
    long lastLoad = start;
    String text = "";
    while (true) {
      try {
        text = text();
      } catch (AssertionError | RuntimeException transientError) {
        // e.g. a script run during navigation; try again
      }
      if (condition.test(text) || System.currentTimeMillis() >= deadline) return text;
      if (reloadEveryMs > 0 && System.currentTimeMillis() - lastLoad >= reloadEveryMs) {
        refresh();
        lastLoad = System.currentTimeMillis();
      }
      Thread.sleep(300);
    }
  }

  /** A PNG of the window (the viewport at the session's window size). */
  void screenshot(Path file) throws IOException, InterruptedException {
    String png = call("GET", "/session/" + session + "/screenshot", null, 120).path("value").asText();
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.write(file, Base64.getDecoder().decode(png));
  }

  /** A WebDriver command; a W3C error reply is an AssertionError. */
  private JsonNode call(String method, String path, Object body, int timeoutSeconds)
      throws IOException, InterruptedException {
    JsonNode reply = send(method, path, body, timeoutSeconds);
    if (reply.path("value").has("error")) {
      throw new AssertionError("WebDriver " + method + " " + path + ": " + reply.path("value").path("error").asText()
          + " " + reply.path("value").path("message").asText());
    }
    return reply;
  }

  private JsonNode send(String method, String path, Object body, int timeoutSeconds)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(timeoutSeconds));
    if (body == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("Content-Type", "application/json; charset=utf-8")
          .method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    String raw = r.body() == null || r.body().isBlank() ? "{}" : r.body();
    return JSON.readTree(raw);
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return "\nchromedriver log tail:\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  /** Quits the browser, stops chromedriver (and anything it left), removes the profile. */
  @Override
  public void close() {
    if (session != null) {
      try {
        send("DELETE", "/session/" + session, null, 60);
      } catch (IOException | RuntimeException e) {
        // the process kill below still ends it
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      session = null;
    }
    List<ProcessHandle> children = driver.descendants().toList();
    driver.destroy();
    try {
      if (!driver.waitFor(15, TimeUnit.SECONDS)) driver.destroyForcibly().waitFor(15, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (ProcessHandle child : children) {
      if (child.isAlive()) child.destroyForcibly();
    }
    try (Stream<Path> walk = Files.walk(profile)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | RuntimeException ignored) {
      // a temp folder left behind is harmless
    }
    try {
      Files.deleteIfExists(log);
    } catch (IOException ignored) {
      // harmless
    }
  }
}
