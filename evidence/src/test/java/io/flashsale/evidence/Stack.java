package io.flashsale.evidence;

import io.dropwizard.testing.ConfigOverride;
import io.dropwizard.testing.DropwizardTestSupport;
import io.flashsale.devstack.LocalPorts;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.launcher.FlashsaleConfiguration;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.persistence.Database;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The real stack for one experiment class: embedded PostgreSQL, the Temporal engine on a real
 * port (the in-memory one, or the temporal CLI's dev server, per the system property
 * {@code flashsale.engine}), the channel stub and the Dropwizard app, all on free ports and their
 * own data folder, talking HTTP and gRPC.
 */
public final class Stack implements BeforeAllCallback, AfterAllCallback {
  /** The engine this test run uses: embedded (in-memory, time skipping) or dev-server. */
  public static final String ENGINE = System.getProperty("flashsale.engine", "embedded");

  /**
   * The channel deadline (charge, query, close) of every stack and child worker unless an
   * experiment asks otherwise: seconds, so a charge on a loaded machine (a cold JVM, a CI run
   * beside another) still answers in time. An experiment that pays and expects PAID is not about
   * the deadline; the service's own default is 300 ms.
   */
  public static final String CHANNEL_TIMEOUT = "5s";

  /**
   * The short deadline of the experiments whose charge must time out (a reply delayed
   * {@link #LATE_REPLY_MS}, a request held at the channel: the UNKNOWN paths). One second, not the
   * service's 300 ms: the other orders of those experiments are paid synchronously under it, and a
   * loaded machine running both engines at once can stall a reply by a few hundred ms. Each of them
   * asks for it ({@link #shortChannelDeadline()}).
   */
  public static final long SHORT_CHANNEL_TIMEOUT_MS = 1_000;

  /**
   * A create's engine deadline in every stack and child API: the call deadline's 10 s, not the
   * service's 1.5 s, for the same reason as {@link #CHANNEL_TIMEOUT} (an experiment that creates
   * and expects CREATED is not about the deadline; X-16 is, and the bench runs the default).
   */
  public static final String CREATE_DEADLINE = "10s";

  /** A channel reply delay that misses the short deadline by a margin a loaded machine keeps. */
  public static final int LATE_REPLY_MS = 2_500;

  /** {@link #SHORT_CHANNEL_TIMEOUT_MS} as a setting. */
  public static final String SHORT_CHANNEL_TIMEOUT = SHORT_CHANNEL_TIMEOUT_MS + "ms";

  /**
   * Per-principal rates off unless an experiment asks (X-37 is about them): most experiments have
   * one buyer send tens of requests in a burst, and X-25 fuzzes with one token at full speed.
   */
  private final Map<String, String> overrides = new LinkedHashMap<>(Map.of("rateLimits.enabled", "false",
      "warmUp.duration", "0s")); // X-04 runs the warm-up of an instance that joins
  private DropwizardTestSupport<FlashsaleConfiguration> support;
  private java.nio.file.Path dataDir;
  private int uiPort;

  public HttpJson api;
  public HttpJson admin;
  public HttpJson channel;
  public Sql sql;
  public FlashsaleApplication.Wiring wiring;
  public int temporalPort;

  /** A config override, e.g. orders.reservationTtl (durations with their unit: "20s"). */
  public Stack with(String key, Object value) {
    overrides.put(key, String.valueOf(value));
    return this;
  }

  /** The short channel deadline ({@link #SHORT_CHANNEL_TIMEOUT}) for an experiment whose charge must time out. */
  public Stack shortChannelDeadline() {
    return with("channel.timeout", SHORT_CHANNEL_TIMEOUT);
  }

  /** The channel deadline this stack runs with, in ms: its override, or {@link #CHANNEL_TIMEOUT}. */
  public long channelTimeoutMs() {
    return io.dropwizard.util.Duration.parse(overrides.getOrDefault("channel.timeout", CHANNEL_TIMEOUT)).toMilliseconds();
  }

  /** Drops a config override (takes effect at the next {@link #start()}). */
  public Stack without(String key) {
    overrides.remove(key);
    return this;
  }

  public boolean devServer() {
    return "dev-server".equals(ENGINE);
  }

  /** The dev server's Web UI (dev-server engine only). */
  public String webUi() {
    return "http://127.0.0.1:" + uiPort;
  }

  public java.nio.file.Path dataDir() {
    return dataDir;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    startFresh(context.getDisplayName());
  }

  /**
   * Starts the stack on a new data folder, for a test that builds it itself once what it points
   * at (e.g. a Temporal cluster, engine {@code external}) is up; the test stops it.
   */
  public void startFresh(String name) throws Exception {
    java.nio.file.Path root = java.nio.file.Path.of("target", "stack-data");
    java.nio.file.Files.createDirectories(root);
    dataDir = java.nio.file.Files.createTempDirectory(root.toAbsolutePath(), name + "-");
    start();
    // a new data folder, a new PostgreSQL: an order already there is another process's database
    long found = sql.count("SELECT count(*) FROM orders");
    if (found != 0) {
      IllegalStateException shared = new IllegalStateException("the new stack's database already holds " + found
          + " orders: " + wiring.jdbcUrl() + " is not the PostgreSQL this stack started");
      try {
        stop(); // its port is the other server's, which stays: this stop reports it still listening
      } catch (RuntimeException e) {
        shared.addSuppressed(e);
      }
      throw shared;
    }
  }

  private int apiPort;
  private int adminPort;

  public int adminPort() {
    return adminPort;
  }
  private int channelPort;
  private int consumerPort;

  /** The fulfillment consumer's port (POST /events). */
  public int consumerPort() {
    return consumerPort;
  }

  /**
   * Starts the service on this stack's data folder and ports; again after {@link #stop()}, it is a
   * restart with the same configuration.
   */
  public void start() throws Exception {
    if (apiPort == 0) {
      apiPort = freePort();
      adminPort = freePort();
      temporalPort = freePort();
      uiPort = freePort();
      channelPort = freePort();
      consumerPort = freePort();
    }
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("server.applicationConnectors[0].port", String.valueOf(apiPort));
    settings.put("server.adminConnectors[0].port", String.valueOf(adminPort));
    settings.put("dataDir", dataDir.toString());
    settings.put("temporal.engine", ENGINE);
    settings.put("temporal.embeddedPort", String.valueOf(temporalPort));
    settings.put("temporal.uiPort", String.valueOf(uiPort));
    settings.put("temporal.devServerDbFile", "memory");
    settings.put("channel.embeddedPort", String.valueOf(channelPort));
    settings.put("consumer.port", String.valueOf(consumerPort));
    settings.put("seed.enabled", "false");
    settings.put("channel.timeout", CHANNEL_TIMEOUT); // an experiment about the deadline overrides it
    settings.put("temporal.createDeadline", CREATE_DEADLINE);
    // scratch: fsync off (it says so at start); not supervised, so restart a killed
    // PostgreSQL themselves, as an operator would (X-26 turns the supervisor on)
    settings.put("database.embeddedDurable", "false");
    settings.put("database.superviseEmbedded", "false");
    settings.putAll(overrides); // one value per key: a key set twice is restored wrongly between stop and start
    List<ConfigOverride> all = new ArrayList<>();
    settings.forEach((k, v) -> all.add(ConfigOverride.config(k, v)));
    support = new DropwizardTestSupport<>(FlashsaleApplication.class, "embedded.yml",
        all.toArray(new ConfigOverride[0]));
    support.before();
    wiring = ((FlashsaleApplication) support.getApplication()).wiring();
    api = new HttpJson("http://127.0.0.1:" + apiPort, null);
    admin = new HttpJson("http://127.0.0.1:" + adminPort, null);
    // the merchant's key: a test's own charge or query stands for a stale client of this merchant
    channel = new HttpJson(wiring.channelUrl(), wiring.merchantKey());
    sql = new Sql(wiring.db());
  }

  /**
   * Stops the service and its local pieces, as Ctrl-C would; the data folder stays. A piece that
   * still answers on its port afterwards did not stop: that is a failure (of the test, or, from
   * {@link #afterAll}, of the experiment's result), not a leftover for the next experiment.
   */
  public void stop() {
    if (support == null) return;
    Map<String, Integer> ports = ownPorts();
    try {
      support.after();
    } finally {
      support = null;
    }
    awaitStopped(ports, STOP_TIMEOUT_MS);
  }

  /** Child processes (the dev server) exit after the stop returns; wide for a loaded 2-core machine. */
  private static final long STOP_TIMEOUT_MS = 30_000;

  /** The ports this stack's pieces listen on, by piece. */
  private Map<String, Integer> ownPorts() {
    Map<String, Integer> ports = new LinkedHashMap<>();
    ports.put("API", apiPort);
    ports.put("admin", adminPort);
    ports.put("Temporal", temporalPort);
    if (devServer()) ports.put("Temporal Web UI", uiPort);
    ports.put("channel stub", channelPort);
    ports.put("fulfillment consumer", consumerPort);
    if (wiring != null) {
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("//[^/:]+:(\\d+)/").matcher(wiring.jdbcUrl());
      if (m.find()) ports.put("PostgreSQL", Integer.parseInt(m.group(1)));
    }
    return ports;
  }

  /** Fails unless no port of the stack accepts a connection within the time. */
  static void awaitStopped(Map<String, Integer> ports, long timeoutMs) {
    long deadline = System.currentTimeMillis() + timeoutMs;
    Map<String, Integer> open = new LinkedHashMap<>(ports);
    while (true) {
      open.values().removeIf(port -> !accepts(port));
      if (open.isEmpty()) return;
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the stack did not stop: still listening after " + timeoutMs + " ms: " + open);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the stack to stop: " + open, e);
      }
    }
  }

  /** Only a refused connection means closed: a port that takes no connection in time is still held. */
  private static boolean accepts(int port) {
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(new java.net.InetSocketAddress("127.0.0.1", port), 1_000);
      return true;
    } catch (java.net.ConnectException refused) {
      return false;
    } catch (IOException heldButNotAnswering) {
      return true;
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    stop();
    // stopped: nothing listens on them any more (a stop that failed keeps them held)
    for (int port : new int[] {apiPort, adminPort, temporalPort, uiPort, channelPort, consumerPort}) {
      if (port > 0) PORTS.release(port);
    }
  }

  public Database db() {
    return wiring.db();
  }

  /** The admin credential of the child servers that join this stack outside the local default. */
  public static final String CHILD_ADMIN_TOKEN =
      java.util.HexFormat.of().formatHex(new java.security.SecureRandom().generateSeed(32));

  /** The database password of the child processes that join outside the local default (the stack's PostgreSQL trusts loopback). */
  public static final String CHILD_DB_PASSWORD =
      java.util.HexFormat.of().formatHex(new java.security.SecureRandom().generateSeed(32));

  /** System properties for a child worker JVM that joins this stack, with the stack's channel deadline. */
  public Map<String, String> workerProperties() {
    return workerProperties(channelTimeoutMs());
  }

  /**
   * System properties for a child worker JVM that joins this stack (split mode), with a channel
   * deadline of its own: for an experiment about the deadline (a charge that must time out in
   * the child, or one that must still be in flight when the child is killed).
   */
  public Map<String, String> workerProperties(long channelTimeoutMs) {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("dw.embedded", "false");
    p.put("dw.database.url", wiring.jdbcUrl());
    p.put("dw.database.password", CHILD_DB_PASSWORD);
    p.put("dw.temporal.target", "127.0.0.1:" + temporalPort);
    p.put("dw.temporal.engine", "external");
    p.put("dw.channel.baseUrl", wiring.channelUrl());
    p.put("dw.channel.notifyUrl", "http://127.0.0.1:" + wiring.apiPort() + "/callbacks/payment");
    p.put("dw.channel.timeout", channelTimeoutMs + "ms");
    p.put("dw.temporal.createDeadline", CREATE_DEADLINE);
    p.put("dw.channel.merchantKey", wiring.merchantKey());
    p.put("dw.channel.plainHttpOutsideLocalDefault", "true"); // the stack's stub speaks http on loopback
    // a child server outside the local default guards its admin port with this credential
    p.put("dw.auth.adminToken", CHILD_ADMIN_TOKEN);
    p.put("dw.logging.level", "INFO");
    // the killed process hosts the activities (it makes the charge, it holds the transaction). On
    // the dev server it hosts the workflows too: a real server moves a dead worker's workflow tasks
    // off its sticky queue after a timeout; the in-memory test server never does, so there the
    // workflows stay on the test JVM's worker
    if (!devServer()) p.put("dw.workerWorkflows", "false");
    return p;
  }

  /** Posts an event to the stack's consumer as a relay delivers it: JSON, signed with the delivery secret. */
  public HttpJson.Reply deliverToConsumer(Map<String, Object> event) {
    try {
      String json = HttpJson.JSON.writeValueAsString(event);
      String signature = new io.flashsale.domain.EventDelivery(wiring.deliverySecret())
          .sign(json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return Problems.send(wiring.consumer().url(), "POST", json, "Content-Type", "application/json",
          io.flashsale.domain.EventDelivery.HEADER, signature);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Waits until some PostgreSQL session is blocked on a lock running a statement that starts so. */
  public void awaitBlockedOnLock(String statementPrefix, long timeoutMs) throws InterruptedException {
    awaitTrue(() -> sql.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        + " AND query LIKE ?", statementPrefix + "%") > 0, timeoutMs, "no session blocked in " + statementPrefix);
  }

  /**
   * Posts a payment callback to the API signed as the channel signs it (the local default signs
   * every callback with a key made at start), as the channel would send it.
   */
  public HttpJson.Reply callback(Object body) {
    try {
      String json = body instanceof String s ? s : HttpJson.JSON.writeValueAsString(body);
      byte[] raw = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      return callback(json, io.flashsale.paymentchannel.CallbackSignatures.header(wiring.callbackSecret(),
          System.currentTimeMillis() / 1000, raw));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Posts a callback body as given with the given signature header (null: none). */
  public HttpJson.Reply callback(String body, String signature) {
    java.net.http.HttpRequest.Builder request = java.net.http.HttpRequest.newBuilder(
            java.net.URI.create("http://127.0.0.1:" + wiring.apiPort() + "/callbacks/payment"))
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body));
    if (signature != null) request.header(io.flashsale.paymentchannel.CallbackSignatures.HEADER, signature);
    try {
      java.net.http.HttpResponse<String> r = HTTP.send(request.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
      com.fasterxml.jackson.databind.JsonNode parsed;
      try {
        parsed = HttpJson.JSON.readTree(r.body());
      } catch (IOException e) {
        parsed = null;
      }
      return new HttpJson.Reply(r.statusCode(), parsed, r.body(), r.headers());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

  /** Create or reset a SKU through the admin task, as an operator would. */
  public void sku(String sku, int total, int perUserLimit) {
    sku("t1", sku, total, perUserLimit);
  }

  /** The same in another tenant. */
  public void sku(String tenant, String sku, int total, int perUserLimit) {
    HttpJson.Reply r = admin.post("/tasks/sku?tenant=" + tenant + "&sku=" + sku + "&total=" + total
        + "&unit_price=1990&per_user_limit=" + perUserLimit, null);
    if (r.status() != 200) throw new IllegalStateException("sku task: " + r.status() + " " + r.raw());
  }

  public String reconcile() {
    return admin.post("/tasks/reconcile", null).raw();
  }

  /** The summary line of the report. */
  public String reconcileSummary() {
    String[] lines = reconcile().trim().split("\n");
    return lines[lines.length - 1];
  }

  /** Notes the reconcile summary and checks it is clean: no mismatch, nothing pending, no drift. */
  public String checkReconcileClean(Evidence ev, String what) {
    String summary = reconcileSummary();
    ev.note(summary);
    ev.check(summary.contains(" mismatches=0 ") && summary.contains(" pending=0 ") && summary.endsWith("drift=0"), what);
    return summary;
  }

  /** Waits until every recorded callback has its effect (the workflow applied it). */
  public void awaitNoticesApplied(int expectedAtLeast, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      long applied = sql.count("SELECT count(*) FROM payment_notification WHERE effect IS NOT NULL");
      long open = sql.count("SELECT count(*) FROM payment_notification WHERE effect IS NULL");
      if (applied >= expectedAtLeast && open == 0) return;
      Thread.sleep(50);
    }
    throw new AssertionError("callbacks not applied within " + timeoutMs + " ms");
  }

  /**
   * Moves the Temporal service's clock forward (time skipping), e.g. past a 60 s reservation
   * TTL, without waiting for it. Timers due in between fire; activities still run in real time.
   */
  public void skip(java.time.Duration d) {
    if (devServer()) {
      // a real server has no time skipping: wait it out (the experiments that skip long timers run
      // on the in-memory engine only)
      try {
        Thread.sleep(d.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return;
    }
    io.temporal.serviceclient.TestServiceStubs test = io.temporal.serviceclient.TestServiceStubs.newServiceStubs(
        io.temporal.serviceclient.TestServiceStubsOptions.newBuilder()
            .setChannel(wiring.temporal().service().getRawChannel())
            .setRpcTimeout(java.time.Duration.ofSeconds(120))
            .validateAndBuildWithDefaults());
    // an activity in flight holds the clock, so this can take real time (e.g. a dead worker's timeout)
    test.blockingStub().unlockTimeSkippingWithSleep(io.temporal.api.testservice.v1.SleepRequest.newBuilder()
        .setDuration(com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()))
        .build());
  }

  /** The Temporal service's own view of a workflow: RUNNING, COMPLETED, ... (describe, not visibility). */
  public String workflowStatus(String workflowId) {
    return wiring.temporal().service().blockingStub().describeWorkflowExecution(
            io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest.newBuilder()
                .setNamespace("default")
                .setExecution(io.temporal.api.common.v1.WorkflowExecution.newBuilder().setWorkflowId(workflowId))
                .build())
        .getWorkflowExecutionInfo().getStatus().name().replace("WORKFLOW_EXECUTION_STATUS_", "");
  }

  /** The run id of the workflow's latest run (describe): a new run of the id changes it. */
  public String latestRunId(String workflowId) {
    return wiring.temporal().service().blockingStub().describeWorkflowExecution(
            io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest.newBuilder()
                .setNamespace("default")
                .setExecution(io.temporal.api.common.v1.WorkflowExecution.newBuilder().setWorkflowId(workflowId))
                .build())
        .getWorkflowExecutionInfo().getExecution().getRunId();
  }

  /**
   * Writes the workflow's history to target/histories/&lt;name&gt;.json; copied to
   * src/test/resources/histories, it becomes a replay test case.
   */
  public void recordHistory(String orderId, String name) throws IOException {
    String workflowId = sql.text("SELECT workflow_id FROM orders WHERE order_id = ?", orderId);
    java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("histories.dir", "target/histories"));
    java.nio.file.Files.createDirectories(dir);
    java.nio.file.Files.writeString(dir.resolve(name + ".json"),
        wiring.temporal().client().fetchHistory(workflowId).toJson(true));
  }

  /** Refund rows in the channel's ledger for one order. */
  public long refundRows(String orderId) {
    long n = 0;
    for (var row : channel.get("/statement").body().path("rows")) {
      if (orderId.equals(row.path("merchant_order").asText()) && "REFUND".equals(row.path("type").asText())) n++;
    }
    return n;
  }

  /** Polls the order row until it reaches the status (or fails the experiment). */
  public void awaitStatus(String orderId, String status, long timeoutMs) throws InterruptedException {
    awaitTrue(() -> status.equals(sql.text("SELECT status FROM orders WHERE order_id = ?", orderId)), timeoutMs,
        orderId + " did not reach " + status);
  }

  /** Polls until the condition holds; false if it did not within the time. */
  public boolean within(java.util.function.BooleanSupplier condition, long timeoutMs) throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      if (condition.getAsBoolean()) return true;
      Thread.sleep(50);
    }
    return condition.getAsBoolean();
  }

  public void awaitTrue(java.util.function.BooleanSupplier condition, long timeoutMs, String failure)
      throws InterruptedException {
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline) {
      if (condition.getAsBoolean()) return;
      Thread.sleep(50);
    }
    throw new AssertionError(failure + " within " + timeoutMs + " ms");
  }

  /** No order is PAYING / UNKNOWN / REFUNDING any more. */
  public void awaitNothingPending(long timeoutMs) throws InterruptedException {
    awaitTrue(() -> sql.count("SELECT count(*) FROM orders WHERE status IN ('PAYING', 'UNKNOWN', 'REFUNDING')") == 0,
        timeoutMs, "orders still pending");
  }

  /** A free port for a service this test starts in a child process; held for the life of this JVM. */
  public static int freePortForChild() throws IOException {
    return freePort();
  }

  /**
   * A port from the reservations every test JVM and the local cluster share (devstack's
   * LocalPorts: a lock file per port under ${java.io.tmpdir}/flashsale-ports), below Linux's
   * ephemeral range, so no outgoing connection made while the stack starts can take it between
   * this call and the bind, and no other JVM running experiments at the same time gets it.
   */
  private static int freePort() throws IOException {
    return PORTS.reserve();
  }

  private static final LocalPorts PORTS = LocalPorts.shared();
}
