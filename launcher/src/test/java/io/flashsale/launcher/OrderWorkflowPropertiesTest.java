package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.flashsale.activities.ChannelActivitiesImpl;
import io.flashsale.activities.HotRowGate;
import io.flashsale.activities.OrderActivitiesImpl;
import io.flashsale.activities.Safeguards;
import io.flashsale.api.resources.CallbackResource;
import io.flashsale.channel.ChannelStub;
import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.launcher.cli.HttpJson;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.paymentchannel.StatementRow;
import io.flashsale.paymentchannel.http.HttpPaymentChannel;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.Notifications;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.Skus;
import io.flashsale.reconciliation.Reconciler;
import io.flashsale.workflows.CommandResult;
import io.flashsale.workflows.OrderSettings;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.flashsale.workflows.Orders;
import io.flashsale.workflows.WorkflowIds;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.InetSocketAddress;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * PBT-01: random sequences of commands (create, retry of a create, pay — answered, declined, with
 * its reply lost, with its reply and its callbacks lost, held at the channel past the timeout, or
 * with the first write of its paid event failing —, cancel), channel-side events (a charge made at
 * the channel, its held callbacks delivered in order or reversed, a callback delivered again) and
 * time (skipped past the reservation TTL, the first query after UNKNOWN, the late-notice window)
 * drive the order workflow on Temporal's time-skipping test environment, with the real activities
 * on an embedded PostgreSQL, the real channel adapter against the channel stub, and the API's
 * callback resource receiving the stub's callbacks.
 *
 * <p>After every step: conservation (total = remaining + held + confirmed), no oversell (units
 * of PAID orders and confirmed units ≤ total, every PAID order's reservation CONFIRMED), at most
 * one effect per notice (one moving effect and one transition per notify id), every PAID order
 * has its one ORDER_PAID event, versions never go back and PAID / REFUNDED never change; a
 * create's answer agrees with the stock it saw, and a retried create names the same order. After
 * each sequence has settled (held callbacks delivered, timers skipped until nothing is in
 * flight): every arrival has its effect, every order the channel charged is PAID or refunded
 * (REFUNDED with one refund), no order was charged or refunded twice, nothing PAID or REFUNDED
 * without money, and reconciliation is clean.
 *
 * <p>Sequences are generated from a seed, a new one each run unless {@code -Dpbt.seed} names it
 * (printed, with the command that replays a failing sequence; {@code -Dpbt.tries}, default
 * {@value #DEFAULT_TRIES}), each on its own SKU and buyers. A failing sequence is shrunk by dropping
 * steps while it still fails, and reported with its seed and steps.
 *
 * <p>Then the negative controls ({@link #EVIDENCE_CONTROLS}), in the same JVM and stack: each
 * safeguard of {@link Safeguards} is switched off in turn and sequences are drawn (at most
 * {@code -Dpbt.controlTries}, default {@value #DEFAULT_CONTROL_TRIES}) until one breaks a property;
 * the same sequence must then keep every property with the safeguard on. A control passes when
 * caught. What catches each safeguard when it is off:
 * <ul>
 *   <li>TIMEOUT_IS_UNKNOWN: a pay whose reply and callbacks are lost fails while charged: "a charged
 *       order is PAID, or REFUNDED with its refund" (reconciliation: CHARGED_BUT_FAILED);
 *   <li>CLOSE_BEFORE_FAIL: a pay held at the channel is failed on the query's NOT_FOUND without a
 *       close, then lands: the same property;
 *   <li>TRANSITION_PRECONDITION: a success delivered to a PAID (or refunded) order is applied again:
 *       "PAID / REFUNDED never change";
 *   <li>CONFIRM_MUST_TAKE_EFFECT: an UNKNOWN order paid by the query after its reservation expired:
 *       "every PAID order's reservation is CONFIRMED";
 *   <li>PAID_EVENT_IN_SAME_TX: the first write of the paid event fails after PAID committed: "every
 *       PAID order has its one ORDER_PAID event";
 *   <li>ROW_LOCK and CONDITIONAL_WRITE: not controls ({@link #NOT_CONTROLS} says why; C29-16 shows them).
 * </ul>
 * {@code -Dpbt.switchOff=<Safeguard>} runs the sequences with one safeguard off instead (no
 * controls), to see the properties fail; {@code -Dpbt.controlTries=0} skips the controls.
 *
 * <p>Its record (notes, RESULT PASS|FAIL, the run and commit) goes to target/evidence/PBT-01@embedded.txt,
 * each control's to PBT-01.&lt;control&gt;@embedded.txt, written after the teardown, which
 * evidence/summary.sh folds into evidence/output.txt like an experiment's (DESIGN.md, Experiments).
 */
@Tag("in-memory-only") // Temporal's time-skipping test environment: summary.sh expects it on that engine only
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the sequences, then the controls
class OrderWorkflowPropertiesTest {
  /** The id summary.sh finds in the sources: this class writes its own record. */
  private static final String EVIDENCE_ID = "PBT-01";
  /**
   * The negative controls, each a record of its own that summary.sh expects ({@code
   * PBT-01.<control>@embedded.txt}): the safeguard named switched off must be caught.
   */
  private static final String[] EVIDENCE_CONTROLS = {"TIMEOUT_IS_UNKNOWN-off", "CLOSE_BEFORE_FAIL-off",
      "TRANSITION_PRECONDITION-off", "CONFIRM_MUST_TAKE_EFFECT-off", "PAID_EVENT_IN_SAME_TX-off"};
  /** The safeguards no sequence of this test can catch, and why: not controls. */
  private static final Map<Safeguards.Safeguard, String> NOT_CONTROLS = Map.of(
      Safeguards.Safeguard.ROW_LOCK, "off alone it changes no outcome: every status write keeps its"
          + " AND status = ? AND version = ? condition, which refuses a decision made on a row that has moved"
          + " (the step is retried on the new row); C29-16 switches the condition off too",
      Safeguards.Safeguard.CONDITIONAL_WRITE, "off alone it changes no outcome: every decision still reads"
          + " the order under its row lock, so the row cannot move between the read and the write;"
          + " C29-16 takes the lock away and makes two decisions overlap");
  static final int DEFAULT_TRIES = 50;
  static final int DEFAULT_CONTROL_TRIES = 100;
  private static final int TRIES = Integer.getInteger("pbt.tries", DEFAULT_TRIES);
  private static final int CONTROL_TRIES = Integer.getInteger("pbt.controlTries", DEFAULT_CONTROL_TRIES);
  /** A new seed each run unless named; sequence i has seed SEED + i, try j of control k (1..5) SEED + k × 1,000,000 + j. */
  private static final long SEED = System.getProperty("pbt.seed", "").isBlank()
      ? java.util.concurrent.ThreadLocalRandom.current().nextLong(1, 1_000_000_000_000L)
      : Long.parseLong(System.getProperty("pbt.seed").strip());
  private static final String SEED_KIND = System.getProperty("pbt.seed", "").isBlank() ? "new this run" : "given";
  private static final long CONTROL_SEED_STRIDE = 1_000_000L;
  /** The command that runs this test alone; a failure prints it with the properties that replay it. */
  private static final String RERUN = "mvn -B -pl launcher -am verify -Dtest=OrderWorkflowPropertiesTest"
      + " -Dsurefire.failIfNoSpecifiedTests=false";
  private static final String TENANT = "t1";
  private static final long UNIT_PRICE = 1990;
  private static final int PER_USER_LIMIT = 3;
  private static final int BUYERS = 3;
  /**
   * TTL 60 s; the first query after UNKNOWN after 90 s (then backing off up to 2 minutes), so an
   * UNKNOWN order can outlive its reservation; late notices for 10 minutes.
   */
  private static final OrderSettings SETTINGS = new OrderSettings(60_000, 90_000, 120_000, 600_000, 4_000, true);
  private static final long CHANNEL_TIMEOUT_MS = 300;
  /** How long the channel holds a PAY_REQUEST_HELD request (real time): past the timeout and the first query. */
  private static final long HOLD_REQUEST_MS = 1_200;
  private static final long SHRINK_BUDGET_MS = 90_000;

  private static EmbeddedPostgres postgres;
  private static Database db;
  private static ChannelStub stub;
  private static HttpJson channelHttp;
  private static PaymentChannel channel;
  private static HttpServer receiver;
  private static ExecutorService receiverThreads;
  private static String notifyUrl;
  private static TestWorkflowEnvironment env;
  private static Orders orders;
  private static final Safeguards safeguards = new Safeguards();
  /** Every callback body the receiver took, per merchant order: a channel may send any of them again. */
  private static final Map<String, List<byte[]>> callbacks = new ConcurrentHashMap<>();
  private static final AtomicInteger runs = new AtomicInteger();
  /** Merchant orders whose callbacks are being lost: the receiver drops them (the channel gave up). */
  private static final java.util.Set<String> losing = ConcurrentHashMap.newKeySet();
  /** A sequence failed in this JVM: its damage stays, so later sequences are judged on their own orders. */
  private static volatile boolean damaged;
  /** Set when the time-skipping engine stalled (see skip): what happened. */
  private static volatile String stalled;
  private static final ExecutorService skipper = Executors.newSingleThreadExecutor(r -> {
    Thread t = new Thread(r, "pbt-skip");
    t.setDaemon(true);
    return t;
  });
  /** Each control's record lines (notes, RESULT), written with the main record. */
  private static final Map<String, List<String>> controlRecords = new java.util.concurrent.ConcurrentSkipListMap<>();
  private static final String SWITCHED_OFF = System.getProperty("pbt.switchOff", "").strip();
  /** The record's lines (notes, ok, FAIL) and the properties checked. */
  private static final List<String> record = new CopyOnWriteArrayList<>();
  private static final java.util.concurrent.atomic.AtomicLong checksPassed = new java.util.concurrent.atomic.AtomicLong();
  private static final java.util.concurrent.atomic.AtomicLong checksFailed = new java.util.concurrent.atomic.AtomicLong();
  /** A test that threw outside a sequence (its figures, say) fails the record too; a broken sequence is recorded where it broke. */
  @RegisterExtension
  static final AfterEachCallback unexpected = context -> context.getExecutionException()
      .filter(e -> !String.valueOf(e.getMessage()).startsWith(EVIDENCE_ID + " "))
      .ifPresent(e -> {
        checksFailed.incrementAndGet();
        record.add("FAIL " + context.getDisplayName() + " threw " + e);
      });

  /** The channel stub's merchant key: the workflow's channel calls carry it. */
  private static final String MERCHANT_KEY = "pbt-merchant-key";
  /** The stub signs every callback with it; the callback resource checks it, as in the service. */
  private static final String CALLBACK_SECRET = "pbt-callback-secret";

  @BeforeAll
  static void start() throws Exception {
    quietLogs();
    postgres = EmbeddedPostgres.builder().setPGStartupWait(java.time.Duration.ofSeconds(60)).start();
    db = new Database(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "postgres", 8);
    db.migrate();
    // PAY_EVENT_WRITE_FAILS: an order's armed sequence makes the first write of its ORDER_PAID event
    // fail once with a serialization failure (transient: the step is retried); a sequence, so a
    // rolled-back transaction does not arm it again
    db.inTx(c -> {
      try (java.sql.Statement st = c.createStatement()) {
        st.execute("CREATE FUNCTION pbt_event_write_fault() RETURNS trigger LANGUAGE plpgsql AS $$"
            + " BEGIN IF NEW.event_type = 'ORDER_PAID' AND to_regclass(quote_ident('pbt_fault_' || NEW.order_id)) IS NOT NULL"
            + " AND nextval(to_regclass(quote_ident('pbt_fault_' || NEW.order_id))) = 1 THEN"
            + " RAISE EXCEPTION 'PBT-01 fault: the first write of % ORDER_PAID fails', NEW.order_id USING ERRCODE = '40001';"
            + " END IF; RETURN NEW; END $$");
        st.execute("CREATE TRIGGER pbt_event_write_fault BEFORE INSERT ON outbox FOR EACH ROW"
            + " EXECUTE FUNCTION pbt_event_write_fault()");
      }
      return null;
    });

    env = TestWorkflowEnvironment.newInstance();
    for (String name : TemporalRuntime.SEARCH_ATTRIBUTES) {
      env.registerSearchAttribute(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
    }
    orders = new Orders(env.getWorkflowClient(), SETTINGS, Duration.ofSeconds(30));
    CallbackResource callbackResource = new CallbackResource(
        new Notifications(db, () -> safeguards.on(Safeguards.Safeguard.TRANSITION_PRECONDITION)), new OrderQueries(db), orders,
        io.flashsale.paymentchannel.PaymentChannels.single(new HttpPaymentChannel(
            "http://127.0.0.1:1", "http://127.0.0.1:1", Duration.ofMillis(CHANNEL_TIMEOUT_MS), MERCHANT_KEY),
            new io.flashsale.paymentchannel.http.SignedJsonCallbacks(java.util.List.of(CALLBACK_SECRET))));
    receiverThreads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "pbt-callbacks");
      t.setDaemon(true);
      return t;
    });
    receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    receiver.setExecutor(receiverThreads);
    receiver.createContext("/callbacks/payment", ex -> {
      try (ex) {
        byte[] raw = ex.getRequestBody().readAllBytes();
        String mo = HttpJson.JSON.readTree(raw).path("merchant_order").asText();
        if (losing.contains(mo)) { // never reaches the service
          ex.sendResponseHeaders(200, -1);
          return;
        }
        callbacks.computeIfAbsent(mo, k -> new CopyOnWriteArrayList<>()).add(raw);
        int status = callbackResource.receive(ex.getRequestHeaders()::getFirst, raw).getStatus();
        ex.sendResponseHeaders(status, -1);
      }
    });
    receiver.start();
    notifyUrl = "http://127.0.0.1:" + receiver.getAddress().getPort() + "/callbacks/payment";
    stub = ChannelStub.start(ChannelStub.Settings.local(MERCHANT_KEY, CALLBACK_SECRET, java.util.Set.of(notifyUrl)));
    // with the merchant's key: a CHANNEL_CHARGE step is a charge the merchant made outside the pay
    channelHttp = new HttpJson(stub.baseUrl(), MERCHANT_KEY, Duration.ofSeconds(30));
    // every callback is held until a step delivers it: the sequence decides when and in which order
    post("/_faults", Map.of("hold_callbacks", true));
    channel = new HttpPaymentChannel(stub.baseUrl(), notifyUrl, Duration.ofMillis(CHANNEL_TIMEOUT_MS), MERCHANT_KEY);

    System.out.println("PBT-01 seed " + SEED + " (" + SEED_KIND + "; -Dpbt.seed=" + SEED + " draws the same sequences)");
    if (!SWITCHED_OFF.isEmpty()) {
      safeguards.switchOff(Safeguards.Safeguard.valueOf(SWITCHED_OFF));
      System.out.println("PBT-01 runs with the safeguard " + SWITCHED_OFF + " switched OFF: the properties should fail");
    }
    Worker worker = env.newWorker(WorkflowIds.TASK_QUEUE);
    worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
    worker.registerActivitiesImplementations(
        new OrderActivitiesImpl(db, SETTINGS.reservationTtl(), safeguards, HotRowGate.unlimited()),
        new ChannelActivitiesImpl(channel, safeguards));
    env.start();
  }

  /** Stops every piece, then writes the record: a piece that fails to stop fails the RESULT too. */
  @AfterAll
  static void stop() throws Exception {
    Exception teardown = null;
    for (AutoCloseable piece : new AutoCloseable[] {
        () -> { if (env != null) env.close(); },
        () -> { if (receiver != null) receiver.stop(0); },
        () -> { if (receiverThreads != null) receiverThreads.shutdownNow(); },
        () -> { if (stub != null) stub.close(); },
        () -> { if (db != null) db.close(); },
        () -> { if (postgres != null) postgres.close(); }}) {
      try {
        piece.close();
      } catch (Exception e) {
        checksFailed.incrementAndGet();
        record.add("FAIL teardown: " + e);
        if (teardown == null) teardown = e; else teardown.addSuppressed(e);
      }
    }
    levels.forEach((name, level) -> ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(name)).setLevel(level));
    writeRecord();
    if (teardown != null) throw teardown;
  }

  @Test
  @org.junit.jupiter.api.Order(1)
  void randomSequencesKeepTheOrderInvariants() {
    long started = System.currentTimeMillis();
    Map<String, Integer> kinds = new TreeMap<>();
    Map<String, Integer> finals = new TreeMap<>();
    int steps = 0;
    record.add("note seed " + SEED + " (" + SEED_KIND + "): sequence i has seed " + SEED + " + i");
    for (int i = 0; i < TRIES; i++) {
      long seed = SEED + i;
      Random rnd = new Random(seed);
      int units = 1 + rnd.nextInt(3); // 1..3 units: the buyers outnumber them
      List<Step> sequence = generate(rnd);
      Run run = new Run(units, true);
      try {
        run.execute(sequence);
      } catch (Exception | AssertionError e) {
        checksFailed.incrementAndGet();
        damaged = true;
        Run smallest = shrink(units, sequence, run);
        String broke = "sequence " + i + " (seed " + seed + ", " + units + " units) broke a property: " + e
            + "\n  rerun: " + rerun(seed, SWITCHED_OFF.isEmpty() ? null : SWITCHED_OFF);
        record.add("FAIL " + broke.replace("\n  ", "; "));
        record.add("note its steps: " + run.log);
        record.add("note shrunk to " + smallest.log.size() + " of " + sequence.size() + " steps, failing with: "
            + smallest.failure + ": " + smallest.log);
        fail("PBT-01 " + broke + "\n  its steps: " + run.log + "\n  shrunk to "
            + smallest.log.size() + " of " + sequence.size() + " steps, failing with: " + smallest.failure
            + "\n  " + smallest.log, e);
      }
      record.add("ok   sequence " + i + " (seed " + seed + ", " + sequence.size() + " steps, " + units
          + " units) kept every property");
      steps += sequence.size();
      for (Step s : sequence) kinds.merge(s.kind().name(), 1, Integer::sum);
      run.finalStatuses().forEach(st -> finals.merge(st, 1, Integer::sum));
    }
    String figures = TRIES + " sequences, " + steps + " steps (seed " + SEED + ") in "
        + (System.currentTimeMillis() - started) / 1000 + " s; steps by kind " + kinds + "; orders ended " + finals
        + "; callback effects " + histogram("SELECT split_part(effect, ' ', 1) FROM payment_notification")
        + "; transitions " + histogram("SELECT coalesce(from_status, '-') || '->' || to_status FROM order_transition");
    record.add("note " + figures);
    System.out.println("PBT-01 " + figures);
  }

  /**
   * The negative controls: each safeguard of {@link #EVIDENCE_CONTROLS} switched off in turn,
   * sequences drawn until one breaks a property, at most {@link #CONTROL_TRIES}; the sequence that
   * broke one then runs again with the safeguard on and must keep every property (the switch broke
   * it, not the sequence). Every safeguard is a control or says in {@link #NOT_CONTROLS} why not.
   */
  @Test
  @org.junit.jupiter.api.Order(2)
  void eachSafeguardSwitchedOffIsCaught() {
    for (Safeguards.Safeguard s : Safeguards.Safeguard.values()) {
      boolean control = List.of(EVIDENCE_CONTROLS).contains(s.name() + "-off");
      if (control == NOT_CONTROLS.containsKey(s)) {
        checksFailed.incrementAndGet();
        record.add("FAIL the safeguard " + s + " is " + (control ? "both a control and not one" : "neither a control nor"
            + " said to be uncatchable (EVIDENCE_CONTROLS, NOT_CONTROLS)"));
      } else if (!control) {
        record.add("note " + s + " off is not a control: " + NOT_CONTROLS.get(s));
      }
    }
    if (stalled != null) {
      record.add("note the controls did not run: " + stalled);
      return;
    }
    if (!SWITCHED_OFF.isEmpty() || CONTROL_TRIES <= 0) {
      record.add("note the controls did not run (" + (SWITCHED_OFF.isEmpty() ? "-Dpbt.controlTries=0" : "-Dpbt.switchOff")
          + "): a summary of this run finds their records missing");
      return;
    }
    for (int k = 0; k < EVIDENCE_CONTROLS.length; k++) {
      String control = EVIDENCE_CONTROLS[k];
      Safeguards.Safeguard s = Safeguards.Safeguard.valueOf(control.substring(0, control.length() - "-off".length()));
      List<String> lines = control(s, SEED + (k + 1) * CONTROL_SEED_STRIDE);
      controlRecords.put(control, lines);
      lines.stream().filter(l -> l.startsWith("ok   caught") || l.startsWith("FAIL ") || l.startsWith("RESULT "))
          .forEach(System.out::println);
    }
    // a safeguard switched off that no sequence caught fails the build, not only the report
    List<String> uncaught = controlRecords.entrySet().stream()
        .filter(c -> c.getValue().stream().noneMatch(l -> l.startsWith("RESULT ") && l.contains(" PASS [embedded] ")))
        .map(Map.Entry::getKey).toList();
    if (!uncaught.isEmpty()) {
      throw new AssertionError(EVIDENCE_ID + " controls not caught: " + uncaught + " (their records say why)");
    }
  }

  /** One control's record lines, its RESULT last: PASS when a sequence broke a property with the safeguard off. */
  private static List<String> control(Safeguards.Safeguard s, long firstSeed) {
    List<String> lines = new ArrayList<>();
    lines.add("note seeds from " + firstSeed + ", at most " + CONTROL_TRIES + " sequences");
    long started = System.currentTimeMillis();
    safeguards.switchOff(s);
    try {
      for (int i = 0; i < CONTROL_TRIES; i++) {
        long seed = firstSeed + i;
        Random rnd = new Random(seed);
        int units = 1 + rnd.nextInt(3);
        List<Step> sequence = generate(rnd);
        Run off = new Run(units, false);
        try {
          off.execute(sequence);
          continue;
        } catch (Exception | AssertionError e) {
          damaged = true;
          long seconds = (System.currentTimeMillis() - started) / 1000;
          String broke = firstLine(e);
          lines.add("note sequence " + i + " (seed " + seed + ", " + sequence.size() + " steps, " + units
              + " units) broke a property with " + s + " off: " + e);
          lines.add("note its steps: " + off.log);
          lines.add("note rerun: " + rerun(seed, s.name()));
          safeguards.restore();
          Run on = new Run(units, false);
          try {
            on.execute(sequence);
          } catch (Exception | AssertionError again) {
            lines.add("note with " + s + " on: " + on.log);
            lines.add("FAIL the sequence of seed " + seed + " breaks a property with " + s + " on too: " + firstLine(again));
            lines.add(controlResult(s, false));
            return lines;
          }
          lines.add("ok   the same sequence keeps every property with " + s + " on");
          lines.add("ok   caught: " + broke + " (seed " + seed + ", try " + (i + 1)
              + " of at most " + CONTROL_TRIES + ", " + seconds + " s)");
          lines.add(controlResult(s, true));
          return lines;
        }
      }
      lines.add("FAIL not caught: " + CONTROL_TRIES + " sequences (seeds " + firstSeed
          + " to " + (firstSeed + CONTROL_TRIES - 1) + ") kept every property with " + s + " off, "
          + (System.currentTimeMillis() - started) / 1000 + " s");
      lines.add(controlResult(s, false));
      return lines;
    } finally {
      safeguards.restore();
    }
  }

  /** A control's title: its section header and its RESULT line carry the same one. */
  private static String controlTitle(Safeguards.Safeguard s) {
    return "negative control of " + EVIDENCE_ID + ": " + s + " switched off must break a property";
  }

  /** A control's RESULT line: PASS when the safeguard switched off was caught (the lines before say how). */
  private static String controlResult(Safeguards.Safeguard s, boolean caught) {
    return "RESULT " + EVIDENCE_ID + "." + s + "-off " + (caught ? "PASS" : "FAIL") + " [embedded] " + controlTitle(s);
  }

  /** The command that replays one sequence (the seed, one try, no controls; the safeguard off if any). */
  private static String rerun(long seed, String off) {
    return RERUN + " -Dpbt.seed=" + seed + " -Dpbt.tries=1" + (off == null ? " -Dpbt.controlTries=0" : " -Dpbt.switchOff=" + off);
  }

  /** A failure's first line, short enough for a RESULT line (which never says FAIL when it passes). */
  private static String firstLine(Throwable e) {
    String m = e instanceof AssertionError && e.getMessage() != null ? e.getMessage() : e.toString();
    m = m.lines().findFirst().orElse("").strip().replace(" FAIL ", " failed ");
    return m.length() > 240 ? m.substring(0, 240) + "…" : m;
  }

  // ---- generation

  enum Kind {
    CREATE(6), RETRY_CREATE(2), PAY(6), PAY_DECLINED(2), PAY_REPLY_LOST(2), PAY_REPLY_AND_CALLBACK_LOST(3),
    PAY_REQUEST_HELD(4), PAY_EVENT_WRITE_FAILS(3), CANCEL(4), CHANNEL_CHARGE(2),
    DELIVER(4), DELIVER_REVERSED(2), REDELIVER(2), SKIP_TTL(2), SKIP_FIRST_QUERY(2), SKIP_LATE_WINDOW(1);

    final int weight;

    Kind(int weight) {
      this.weight = weight;
    }
  }

  /** The pays that meet a channel or database fault: they pick among the orders still CREATED, if any. */
  private static final java.util.Set<Kind> FAULTY_PAYS =
      java.util.EnumSet.of(Kind.PAY_REPLY_AND_CALLBACK_LOST, Kind.PAY_REQUEST_HELD, Kind.PAY_EVENT_WRITE_FAILS);

  /** One step; {@code pick} chooses the order (or buyer), {@code arg} the quantity. */
  record Step(Kind kind, int pick, int arg) {
    @Override
    public String toString() {
      return kind + "(" + pick + "," + arg + ")";
    }
  }

  private static List<Step> generate(Random rnd) {
    int total = 0;
    for (Kind k : Kind.values()) total += k.weight;
    int n = 5 + rnd.nextInt(8);
    List<Step> steps = new ArrayList<>();
    steps.add(new Step(Kind.CREATE, rnd.nextInt(BUYERS), rnd.nextInt(2)));
    for (int i = 1; i < n; i++) {
      int w = rnd.nextInt(total);
      Kind kind = null;
      for (Kind k : Kind.values()) {
        if (w < k.weight) {
          kind = k;
          break;
        }
        w -= k.weight;
      }
      steps.add(new Step(kind, rnd.nextInt(1000), rnd.nextInt(2)));
    }
    return steps;
  }

  /**
   * Drops steps one at a time while the sequence still fails (each try on a fresh SKU and buyers);
   * the smallest failing run, with its log and failure.
   */
  private static Run shrink(int units, List<Step> failing, Run failed) {
    long deadline = System.currentTimeMillis() + SHRINK_BUDGET_MS;
    List<Step> current = failing;
    Run smallest = failed;
    boolean smaller = true;
    while (smaller && System.currentTimeMillis() < deadline) {
      smaller = false;
      for (int i = current.size() - 1; i >= 1 && System.currentTimeMillis() < deadline; i--) {
        List<Step> candidate = new ArrayList<>(current);
        candidate.remove(i);
        Run attempt = new Run(units, false);
        try {
          attempt.execute(candidate);
        } catch (Exception | AssertionError stillFails) {
          attempt.failure = stillFails.toString();
          current = candidate;
          smallest = attempt;
          smaller = true;
        }
      }
    }
    if (smallest.failure == null) smallest.failure = "(as above)";
    return smallest;
  }

  // ---- one sequence on its own SKU and buyers

  private record Order(String id, String workflowId, String subject, String key, int quantity, long amount) {}

  private static final class Run {
    final int n = runs.incrementAndGet();
    final String sku = "sku-pbt-" + n;
    final List<Order> made = new ArrayList<>();
    final Map<String, String> last = new HashMap<>();
    final List<String> log = new ArrayList<>();
    String failure;
    /** Its checks count in the record's ASSERTIONS: the main sequences' only (not shrinking, not a control). */
    final boolean counted;
    /** A failed run left its damage in the database: reconciliation is judged on this run's orders only. */
    final boolean ownOrdersOnly = damaged;
    int keys;

    Run(int units, boolean counted) {
      this.counted = counted;
      new Skus(db).upsert(TENANT, sku, units, UNIT_PRICE, PER_USER_LIMIT);
    }

    void execute(List<Step> steps) throws Exception {
      for (Step s : steps) {
        log.add(s + " → " + apply(s));
        checkAlways();
      }
      settle();
      checkSettled();
    }

    private String subject(int buyer) {
      return "pbt" + n + "-u" + buyer;
    }

    private String apply(Step s) throws Exception {
      if (made.isEmpty() && s.kind() != Kind.CREATE) return "no order yet";
      // a pay meeting a fault picks among the orders that can still be paid, if any (PAY covers the refusals)
      List<Order> open = FAULTY_PAYS.contains(s.kind())
          ? made.stream().filter(m -> "CREATED".equals(status(m.id()))).toList() : List.of();
      Order o = made.isEmpty() ? null : open.isEmpty() ? made.get(s.pick() % made.size()) : open.get(s.pick() % open.size());
      switch (s.kind()) {
        case CREATE -> {
          String subject = subject(s.pick() % BUYERS);
          int quantity = 1 + s.arg();
          String key = "k" + (keys++);
          int before = remaining();
          CreateResult r = orders.create(new CreateOrder(TENANT, subject, key, sku, quantity, null));
          int after = remaining();
          switch (r.outcome()) {
            case CREATED -> {
              check(before >= quantity && after == before - quantity,
                  "CREATED took its units: remaining " + before + " → " + after + " for " + quantity);
              made.add(new Order(r.order().orderId(), WorkflowIds.forScope(TENANT, subject, key), subject, key,
                  quantity, r.order().amount()));
            }
            case SOLD_OUT -> check(before < quantity && after == before, "SOLD_OUT only when " + quantity + " > " + before);
            case USER_LIMIT -> check(before >= quantity && after == before, "USER_LIMIT took nothing");
            default -> fail("a create with a fresh key answered " + r.outcome());
          }
          if (r.outcome() != CreateOutcome.CREATED) {
            check(count("SELECT count(*) FROM orders WHERE subject = ? AND request_key = ?", subject, key) == 0,
                r.outcome() + " stored no order");
          }
          return subject + " x" + quantity + " " + r.outcome() + (r.order() == null ? "" : " " + r.order().orderId());
        }
        case RETRY_CREATE -> {
          CreateResult r = orders.create(new CreateOrder(TENANT, o.subject(), o.key(), sku, o.quantity(), null));
          check((r.outcome() == CreateOutcome.CREATED || r.outcome() == CreateOutcome.REPLAY) && r.order() != null
              && o.id().equals(r.order().orderId()), "a retried create names its order " + o.id() + ": " + r.outcome());
          return o.id() + " " + r.outcome();
        }
        case PAY -> {
          return o.id() + " " + command(o, () -> orders.pay(o.workflowId(), null));
        }
        case PAY_DECLINED -> {
          fault(o, Map.of("decline", true));
          return o.id() + " " + command(o, () -> orders.pay(o.workflowId(), null));
        }
        case PAY_REPLY_LOST -> {
          fault(o, Map.of("reply_delay_ms", 3 * CHANNEL_TIMEOUT_MS));
          return o.id() + " " + command(o, () -> orders.pay(o.workflowId(), null));
        }
        case PAY_REPLY_AND_CALLBACK_LOST -> {
          // the reply times out and the charge's callbacks never come: only a query can tell
          boolean created = "CREATED".equals(status(o.id()));
          fault(o, Map.of("reply_delay_ms", 3 * CHANNEL_TIMEOUT_MS));
          String answer = command(o, () -> orders.pay(o.workflowId(), null));
          // a pay the workflow took reached the channel, which the query asks: its callbacks may go
          return o.id() + " " + answer + (created ? ", " + lose(o.id()) + " callbacks lost" : "");
        }
        case PAY_REQUEST_HELD -> {
          // the channel holds the request past the timeout (UNKNOWN) and past the first query, which
          // finds no charge (NOT_FOUND): only a close keeps the request from landing after that;
          // the callbacks of a charge it made are lost
          boolean created = "CREATED".equals(status(o.id()));
          fault(o, Map.of("hold_request_ms", HOLD_REQUEST_MS));
          long sent = System.currentTimeMillis();
          String answer = command(o, () -> orders.pay(o.workflowId(), null));
          fault(o, Map.of("hold_request_ms", 0));
          if (!created) return o.id() + " " + answer;
          skip(Duration.ofMillis(SETTINGS.unknownFirstQueryMillis() + 1_000));
          long deadline = System.currentTimeMillis() + 10_000;
          while ("UNKNOWN".equals(status(o.id())) && System.currentTimeMillis() < deadline) Thread.sleep(20);
          String queried = status(o.id()) + " after " + (System.currentTimeMillis() - sent) + " ms";
          Thread.sleep(Math.max(0, sent + HOLD_REQUEST_MS + 300 - System.currentTimeMillis())); // it landed or was refused
          return o.id() + " " + answer + ", " + queried + ", channel " + channelStatus(o.id()) + ", "
              + lose(o.id()) + " callbacks lost";
        }
        case PAY_EVENT_WRITE_FAILS -> {
          // the database fails the first write of the order's ORDER_PAID event once (a transient error)
          db.inTx(c -> {
            try (java.sql.Statement st = c.createStatement()) {
              String name = "\"pbt_fault_" + o.id() + "\"";
              st.execute("DROP SEQUENCE IF EXISTS " + name);
              st.execute("CREATE SEQUENCE " + name);
            }
            return null;
          });
          return o.id() + " " + command(o, () -> orders.pay(o.workflowId(), null)) + " (its paid event's first write fails)";
        }
        case CANCEL -> {
          return o.id() + " " + command(o, () -> orders.cancel(o.workflowId(), null));
        }
        case CHANNEL_CHARGE -> {
          // the buyer paid on the channel's side (e.g. a request our pay had given up on)
          HttpJson.Reply r = channelHttp.post("/charge",
              Map.of("merchant_order", o.id(), "amount", o.amount(), "notify_url", notifyUrl));
          return o.id() + " channel " + r.status() + " " + (r.body() == null ? r.raw() : r.body().path("result").asText());
        }
        case DELIVER, DELIVER_REVERSED -> {
          boolean reversed = s.kind() == Kind.DELIVER_REVERSED;
          awaitIdle(o.workflowId());
          int released = release(o.id(), reversed);
          awaitApplied(o.id());
          return o.id() + " " + released + " callbacks" + (reversed ? " reversed" : "") + " → " + effects(o.id());
        }
        case REDELIVER -> {
          List<byte[]> sent = callbacks.getOrDefault(o.id(), List.of());
          if (sent.isEmpty()) return o.id() + " nothing delivered yet";
          byte[] again = sent.get(s.arg() == 0 ? 0 : sent.size() - 1);
          awaitIdle(o.workflowId());
          // the same body, signed again as the channel signs a retry (a signature is valid for minutes)
          java.net.http.HttpResponse<Void> r = java.net.http.HttpClient.newHttpClient().send(
              java.net.http.HttpRequest.newBuilder(java.net.URI.create(notifyUrl))
                  .header("Content-Type", "application/json")
                  .header(io.flashsale.paymentchannel.CallbackSignatures.HEADER, io.flashsale.paymentchannel
                      .CallbackSignatures.header(CALLBACK_SECRET, System.currentTimeMillis() / 1000, again))
                  .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(again)).build(),
              java.net.http.HttpResponse.BodyHandlers.discarding());
          check(r.statusCode() == 200, "a callback sent again is accepted: " + r.statusCode());
          awaitApplied(o.id());
          return o.id() + " again " + HttpJson.JSON.readTree(again).path("notify_id").asText() + " → " + effects(o.id());
        }
        case SKIP_FIRST_QUERY -> {
          skip(Duration.ofMillis(SETTINGS.unknownFirstQueryMillis() + 1_000));
          return "skipped past the first query after UNKNOWN";
        }
        case SKIP_TTL -> {
          skip(Duration.ofMillis(SETTINGS.reservationTtlMillis() + 1_000));
          return "skipped past the reservation TTL";
        }
        case SKIP_LATE_WINDOW -> {
          skip(Duration.ofMillis(SETTINGS.lateNoticeWindowMillis() + 60_000));
          return "skipped past the late-notice window";
        }
        default -> throw new IllegalStateException(s.kind().name());
      }
    }

    /**
     * A pay or cancel as the API sends it. An order whose workflow has closed (after its late-notice
     * window) is answered from its row by the API; that is only right for a final order.
     */
    private String command(Order o, java.util.function.Supplier<CommandResult> call) {
      try {
        CommandResult r = call.get();
        return (r.outcome() == null ? "ran" : r.outcome().name()) + " " + r.status() + " v" + r.version();
      } catch (RuntimeException closed) {
        String status = status(o.id());
        check(List.of("PAID", "FAILED", "CANCELLED", "REFUNDED").contains(status),
            "a command failed on an order that is not final (" + status + "): " + closed);
        return "workflow closed, order " + status;
      }
    }

    private void fault(Order o, Map<String, Object> rule) {
      Map<String, Object> body = new LinkedHashMap<>(rule);
      body.put("merchant_order", o.id());
      body.put("hold_callbacks", true); // an order's own rule replaces the default one
      post("/_faults", body);
    }

    /** Delivers every held callback and skips time until no order of this sequence is in flight. */
    private void settle() throws Exception {
      for (int round = 0; round < 12; round++) {
        // counted before the release: nothing in flight, nothing left to publish a callback
        long inFlight = count("SELECT count(*) FROM orders WHERE sku = ? AND status IN ('PAYING', 'UNKNOWN', 'REFUNDING')", sku);
        int released = 0;
        for (Order o : made) {
          awaitIdle(o.workflowId());
          released += release(o.id(), false);
          awaitApplied(o.id());
        }
        if (released == 0 && inFlight == 0) return;
        if (inFlight > 0) {
          skip(Duration.ofMillis(SETTINGS.unknownFirstQueryMillis() + SETTINGS.unknownQueryCapMillis()));
          long deadline = System.currentTimeMillis() + 5_000;
          while (System.currentTimeMillis() < deadline && count("SELECT count(*) FROM orders WHERE sku = ?"
              + " AND status IN ('PAYING', 'UNKNOWN', 'REFUNDING')", sku) > 0) {
            Thread.sleep(50);
          }
        }
        checkAlways();
      }
      fail("sequence did not settle: " + statuses());
    }

    // ---- properties

    private void checkAlways() {
      // conservation and no oversell, read as one statement
      long[] stock = db.read(c -> {
        try (PreparedStatement ps = c.prepareStatement("SELECT s.total, s.remaining,"
            + " coalesce(sum(r.quantity) FILTER (WHERE r.status = 'HELD'), 0),"
            + " coalesce(sum(r.quantity) FILTER (WHERE r.status = 'CONFIRMED'), 0),"
            + " (SELECT coalesce(sum(o.quantity), 0) FROM orders o WHERE o.tenant = s.tenant AND o.sku = s.sku AND o.status = 'PAID')"
            + " FROM sku s LEFT JOIN reservation r ON r.tenant = s.tenant AND r.sku = s.sku"
            + " WHERE s.tenant = ? AND s.sku = ? GROUP BY s.tenant, s.sku, s.total, s.remaining")) {
          ps.setString(1, TENANT);
          ps.setString(2, sku);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5)};
          }
        }
      });
      check(stock[0] == stock[1] + stock[2] + stock[3], "conservation: total " + stock[0] + " = remaining " + stock[1]
          + " + held " + stock[2] + " + confirmed " + stock[3]);
      check(stock[3] <= stock[0] && stock[4] <= stock[0], "no oversell: confirmed " + stock[3] + ", paid units "
          + stock[4] + ", total " + stock[0]);
      check(count("SELECT count(*) FROM orders o JOIN reservation r ON r.reservation_key = o.reservation_key"
          + " WHERE o.sku = ? AND o.status = 'PAID' AND r.status <> 'CONFIRMED'", sku) == 0,
          "every PAID order's reservation is CONFIRMED");
      // at most one effect per notice: one moving effect per notify id, one transition per notify id
      List<String> twice = column("SELECT n.notify_id FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
          + " WHERE o.sku = ? AND split_part(n.effect, ' ', 1) NOT IN"
          + " ('DUPLICATE', 'IGNORED', 'NOOP', 'REJECTED', 'AMOUNT_MISMATCH', 'REPLAY_CANCEL')"
          + " GROUP BY n.notify_id HAVING count(*) > 1", sku);
      check(twice.isEmpty(), "at most one effect per notice; took effect more than once: " + twice);
      List<String> moved = column("SELECT t.order_id || ' ' || split_part(t.cause, ' ', 2) FROM order_transition t"
          + " JOIN orders o ON o.order_id = t.order_id WHERE o.sku = ? AND t.cause LIKE 'callback %'"
          + " GROUP BY t.order_id, split_part(t.cause, ' ', 2) HAVING count(*) > 1", sku);
      check(moved.isEmpty(), "at most one transition per notice; moved more than once: " + moved);
      // versions only go up; PAID and REFUNDED are final
      for (Map.Entry<String, String> now : statuses().entrySet()) {
        String before = last.put(now.getKey(), now.getValue());
        if (before == null) continue;
        String[] b = before.split(" v");
        String[] a = now.getValue().split(" v");
        check(Integer.parseInt(a[1]) >= Integer.parseInt(b[1]), now.getKey() + " version went back: " + before + " → " + now.getValue());
        if (b[0].equals("PAID") || b[0].equals("REFUNDED")) {
          check(before.equals(now.getValue()), now.getKey() + " left a final status: " + before + " → " + now.getValue());
        }
      }
      // the ORDER_PAID event is written with the PAID status: one per PAID order, none for another
      List<String> events = column("SELECT o.order_id || ' ' || o.status || ' events ' || count(e.event_id) FROM orders o"
          + " LEFT JOIN outbox e ON e.order_id = o.order_id AND e.event_type = 'ORDER_PAID' WHERE o.sku = ?"
          + " GROUP BY o.order_id, o.status HAVING count(e.event_id) <> CASE WHEN o.status = 'PAID' THEN 1 ELSE 0 END", sku);
      check(events.isEmpty(), "every PAID order has its one ORDER_PAID event (and no other order one): " + events);
    }

    private void checkSettled() throws Exception {
      check(count("SELECT count(*) FROM payment_notification n JOIN orders o ON o.order_id = n.merchant_order"
          + " WHERE o.sku = ? AND n.effect IS NULL", sku) == 0, "every callback arrival has its effect");
      Map<String, int[]> ledger = new HashMap<>(); // order → {charges, refunds}
      for (StatementRow row : channel.statement()) {
        int[] l = ledger.computeIfAbsent(row.merchantOrder(), k -> new int[2]);
        if (row.movement() == StatementRow.Movement.CHARGE) l[0]++;
        if (row.movement() == StatementRow.Movement.REFUND) l[1]++;
      }
      Map<String, String> now = statuses();
      for (Order o : made) {
        int[] l = ledger.getOrDefault(o.id(), new int[2]);
        String status = now.get(o.id()).split(" ")[0];
        String what = o.id() + " " + status + " charged " + l[0] + " refunded " + l[1];
        check(l[0] <= 1 && l[1] <= 1, "charged and refunded at most once: " + what);
        if (l[0] == 1) {
          check(l[1] == 0 ? status.equals("PAID") : status.equals("REFUNDED"),
              "a charged order is PAID, or REFUNDED with its refund: " + what);
        } else {
          check(l[1] == 0 && !status.equals("PAID") && !status.equals("REFUNDED"),
              "an order never charged is neither PAID nor REFUNDED: " + what);
        }
      }
      Reconciler.Report report = new Reconciler(db, channel).run(null);
      if (ownOrdersOnly) {
        // an earlier failing run left its damage behind: judge this run's own orders only
        List<String> own = report.mismatches().stream()
            .filter(m -> made.stream().anyMatch(o -> m.startsWith(o.id() + " "))).toList();
        check(own.isEmpty(), "reconciliation finds nothing on this sequence's orders: " + own);
      } else {
        check(report.clean() && report.pending() == 0, "reconciliation clean: " + report.text().strip());
      }
    }

    List<String> finalStatuses() {
      return statuses().values().stream().map(v -> v.split(" ")[0]).toList();
    }

    private Map<String, String> statuses() {
      Map<String, String> out = new TreeMap<>();
      for (String line : column("SELECT order_id || ' ' || status || ' v' || version FROM orders WHERE sku = ?", sku)) {
        int space = line.indexOf(' ');
        out.put(line.substring(0, space), line.substring(space + 1));
      }
      return out;
    }

    private String status(String orderId) {
      List<String> s = column("SELECT status FROM orders WHERE order_id = ?", orderId);
      return s.isEmpty() ? null : s.get(0);
    }

    private String effects(String orderId) {
      return String.join(", ", column("SELECT notify_id || ' ' || kind || ' ' || coalesce(effect, '-')"
          + " FROM payment_notification WHERE merchant_order = ? ORDER BY id", orderId));
    }

    private int remaining() {
      return (int) count("SELECT remaining FROM sku WHERE tenant = ? AND sku = ?", TENANT, sku);
    }

    private void check(boolean holds, String property) {
      if (!holds) throw new AssertionError(property);
      if (counted) checksPassed.incrementAndGet();
    }
  }

  // ---- the engine

  /**
   * Skips workflow time. Temporal's time-skipping test server can stall for good (sdk-java#2391:
   * an activity cancelled in the workflow task that also brings its completion), after which
   * every skip takes real time: a skip that does not return within a minute ends the run.
   */
  private static void skip(Duration d) throws InterruptedException {
    if (stalled != null) throw new EngineStalled(stalled);
    java.util.concurrent.Future<?> done = skipper.submit(() -> env.sleep(d));
    try {
      done.get(60, java.util.concurrent.TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      stalled = "skipping " + d.toSeconds() + " s of workflow time did not return within 60 s: the time-skipping test"
          + " server stalled (Temporal sdk-java#2391), a fault of the test engine, not a property of the order workflow";
      throw new EngineStalled(stalled);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    }
  }

  /**
   * Waits (at most 3 s) until the order's workflow has no activity in flight and no workflow task
   * outstanding, before a callback reaches it: a notice that makes it cancel a round whose
   * completion arrives in the same workflow task is what stalls the test server (see skip).
   */
  private static void awaitIdle(String workflowId) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 3_000;
    while (System.currentTimeMillis() < deadline) {
      if (env.getWorkflowClient().newUntypedWorkflowStub(workflowId).describe().getRawDescription()
          .getPendingActivitiesCount() == 0) {
        io.temporal.api.enums.v1.EventType last =
            env.getWorkflowClient().fetchHistory(workflowId).getLastEvent().getEventType();
        if (last != io.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
            && last != io.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
          return;
        }
      }
      Thread.sleep(20);
    }
  }

  /** The engine stalled: no sequence after it means anything (an Error, so no sequence counts it as broken). */
  static final class EngineStalled extends Error {
    EngineStalled(String why) {
      super(why);
    }
  }

  // ---- channel stub and database helpers

  /** The order's callbacks held at the channel are sent and lost on the way: the service never sees them. */
  private static int lose(String orderId) throws InterruptedException {
    losing.add(orderId);
    try {
      return release(orderId, false);
    } finally {
      losing.remove(orderId);
    }
  }

  /** What the channel's ledger says of the order (NOT_FOUND, CHARGED, CLOSED, ...). */
  private static String channelStatus(String orderId) {
    HttpJson.Reply r = channelHttp.get("/charges/" + orderId);
    return r.body() == null ? r.status() + "" : r.body().path("status").asText(r.status() + "");
  }

  private static int release(String orderId, boolean reversed) {
    HttpJson.Reply r = post("/_callbacks/release", Map.of("merchant_order", orderId, "order", reversed ? "reverse" : "fifo"));
    return r.body().path("released").asInt();
  }

  /** Waits until the workflow applied every arrival of the order's callbacks. */
  private static void awaitApplied(String orderId) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 30_000;
    while (count("SELECT count(*) FROM payment_notification WHERE merchant_order = ? AND effect IS NULL", orderId) > 0) {
      if (System.currentTimeMillis() > deadline) throw new AssertionError("callbacks of " + orderId + " not applied in 30 s");
      Thread.sleep(20);
    }
  }

  private static HttpJson.Reply post(String path, Object body) {
    HttpJson.Reply r = channelHttp.post(path, body);
    if (r.status() != 200) throw new IllegalStateException("channel stub " + path + ": " + r.status() + " " + r.raw());
    return r;
  }

  private static long count(String sql, Object... args) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    });
  }

  private static Map<String, Integer> histogram(String sql) {
    Map<String, Integer> out = new TreeMap<>();
    for (String v : column(sql)) out.merge(String.valueOf(v), 1, Integer::sum);
    return out;
  }

  private static List<String> column(String sql, Object... args) {
    return db.read(c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
        List<String> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) out.add(rs.getString(1));
        }
        return out;
      }
    });
  }

  /** Logger levels this test changed, to put back for the module's other tests. */
  private static final Map<String, ch.qos.logback.classic.Level> levels = new LinkedHashMap<>();

  /** The steps log at INFO: keep this test's output to warnings and its own summary. */
  private static void quietLogs() {
    setLevel(org.slf4j.Logger.ROOT_LOGGER_NAME, ch.qos.logback.classic.Level.WARN);
    // a refused pay or cancel is a validator's answer, which the SDK logs as a warning with its trace
    setLevel("io.temporal.internal.sync.WorkflowExecutionHandler", ch.qos.logback.classic.Level.ERROR);
    // a step failing on PAY_EVENT_WRITE_FAILS's injected fault is retried, which the SDK logs with its trace
    setLevel("io.temporal.internal.activity.ActivityTaskExecutors", ch.qos.logback.classic.Level.ERROR);
  }

  private static void setLevel(String name, ch.qos.logback.classic.Level level) {
    ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(name);
    levels.putIfAbsent(name, logger.getLevel());
    logger.setLevel(level);
  }

  // ---- the record, in the format of the evidence module's experiments (evidence/summary.sh reads it)

  private static void writeRecord() throws java.io.IOException {
    String title = "property test of the order workflow: " + TRIES + " seeded sequences (seed " + SEED + ", "
        + SEED_KIND + ")" + (SWITCHED_OFF.isEmpty() ? "" : " with the safeguard " + SWITCHED_OFF + " switched OFF");
    boolean pass = checksFailed.get() == 0 && checksPassed.get() > 0;
    StringBuilder sb = new StringBuilder("== " + EVIDENCE_ID + " [embedded] " + title + "\n");
    if (checksPassed.get() == 0 && checksFailed.get() == 0) sb.append("FAIL no sequence ran\n");
    for (String line : record) sb.append(line).append('\n');
    sb.append("RESULT ").append(EVIDENCE_ID).append(pass ? " PASS" : " FAIL").append(" [embedded] ").append(title)
        .append('\n');
    sb.append("ASSERTIONS passed=").append(checksPassed.get()).append(" failed=").append(checksFailed.get()).append('\n');
    String run = runLine();
    sb.append(run).append('\n');
    java.nio.file.Path dir = java.nio.file.Path.of(System.getProperty("evidence.dir", "target/evidence"));
    java.nio.file.Files.createDirectories(dir);
    java.nio.file.Files.writeString(dir.resolve(EVIDENCE_ID + "@embedded.txt"), sb.toString());
    System.out.print(sb);
    // each control's own record: summary.sh expects one per entry of EVIDENCE_CONTROLS
    for (Map.Entry<String, List<String>> c : controlRecords.entrySet()) {
      String id = EVIDENCE_ID + "." + c.getKey();
      Safeguards.Safeguard s = Safeguards.Safeguard.valueOf(c.getKey().substring(0, c.getKey().length() - "-off".length()));
      StringBuilder cb = new StringBuilder("== " + id + " [embedded] " + controlTitle(s) + "\n");
      for (String line : c.getValue()) cb.append(line).append('\n');
      cb.append("ASSERTIONS passed=").append(c.getValue().stream().filter(l -> l.startsWith("ok   ")).count())
          .append(" failed=").append(c.getValue().stream().filter(l -> l.startsWith("FAIL ")).count()).append('\n');
      cb.append(run).append('\n');
      java.nio.file.Files.writeString(dir.resolve(id + "@embedded.txt"), cb.toString());
    }
  }

  /**
   * {@code RUN <id> commit=<sha> tree=clean|modified}, as the evidence module's RunStamp writes it:
   * the Maven invocation's id and the code it ran (the artefacts a run writes do not count).
   */
  private static String runLine() {
    String run = System.getProperty("evidence.run", "").isBlank() ? "unstamped" : System.getProperty("evidence.run");
    String commit = git("rev-parse", "HEAD");
    String changes = commit == null ? null : git("status", "--porcelain", "--", ":/",
        ":(top,exclude)evidence/output.txt", ":(top,exclude)evidence/schemathesis", ":(top,exclude)evidence/webui");
    return "RUN " + run + " commit=" + (commit == null ? "unknown" : commit) + " tree="
        + (changes != null && changes.isEmpty() ? "clean" : "modified");
  }

  private static String git(String... args) {
    List<String> cmd = new ArrayList<>(List.of("git"));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
      return p.waitFor() == 0 ? out : null;
    } catch (java.io.IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
