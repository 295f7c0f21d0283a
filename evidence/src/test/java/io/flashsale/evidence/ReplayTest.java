package io.flashsale.evidence;

import io.flashsale.devstack.replay.ReplayGate;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.temporal.api.history.v1.HistoryEvent;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * X-23: recorded histories from real runs (src/test/resources/histories) must replay against the
 * current workflow code: a change that alters history without Workflow.getVersion fails here.
 * Each history is one check, so a failing one is named in the evidence and counted. The folder
 * must hold what production runs: histories of the default path (database steps as local
 * activities) through pay, cancel and expiry, so the gate can never silently stop covering it.
 */
@org.junit.jupiter.api.Tag("in-memory-only") // engine-free: it runs once, in the fast run
@Tag("fast") // in ./flashsale test --fast
class ReplayTest {
  @RegisterExtension static final Evidence ev = new Evidence("X-23",
      "recorded histories replay against the current workflow code");


  /** The fewest recorded histories of the default path (local database steps). */
  static final int MIN_LOCAL_STEP_HISTORIES = 17;

  /** The newest change id: one timer per deadline, no memo, OrderStatus alone upserted. */
  static final String NEWEST_CHANGE = "lean-history";

  /** The fewest histories recorded by the newest code with its marker (the `-lean` ones; the no-create run has no order, so no marker). */
  static final int NEWEST_BRANCH_HISTORIES = 20;

  /**
   * Database steps each of which some default-path history runs as a local activity: create,
   * the pay steps, cancel, expiry, a notice, a refund, the load after continue-as-new.
   */
  static final Set<String> LOCAL_STEPS_COVERED = Set.of("Reserve", "BeginPay", "ApplyChannelAnswer", "Cancel",
      "ExpireReservation", "ApplyNotice", "RecordSignalArrival", "CompleteRefund", "Load");

  @Test
  void recordedHistoriesReplay() throws Exception {
    List<Path> histories = Histories.recorded();
    ev.check(!histories.isEmpty(), "recorded histories found: " + histories.size());
    ReplayGate.Report report = new ReplayGate().replayDirectory(histories.get(0).getParent());
    // every history is tried and recorded; the first failure fails the test at the end
    List<AssertionError> failures = new ArrayList<>();
    for (ReplayGate.Outcome o : report.outcomes()) {
      if (!o.isOk()) ev.note(o.name() + " does not replay: " + o.reason());
      try {
        ev.check(o.isOk(), o.name() + " replays");
      } catch (AssertionError e) {
        failures.add(e);
      }
    }
    ev.equal(histories.size(), report.outcomes().size(), "one verdict per recorded history");
    if (!failures.isEmpty()) throw failures.get(0);
  }

  /**
   * The default path is in the folder: at least {@value #MIN_LOCAL_STEP_HISTORIES} histories
   * recorded with local database steps (LocalActivity markers; the retired
   * {@code local-database-steps} marker too in those recorded before its retirement), together
   * running every step of {@link #LOCAL_STEPS_COVERED} locally, and some of them by the newest code.
   */
  @Test
  void theDefaultPathIsRecorded() throws Exception {
    Map<String, Set<String>> localSteps = new TreeMap<>();
    for (Path p : Histories.recorded()) {
      List<HistoryEvent> events = Histories.read(p);
      Set<String> types = Histories.localActivityTypes(events);
      if (types.isEmpty()) continue;
      localSteps.put(p.getFileName().toString(), types);
    }
    localSteps.forEach((file, types) -> ev.note(file + ": local " + String.join(", ", types)));
    ev.check(localSteps.size() >= MIN_LOCAL_STEP_HISTORIES, "recorded histories with local database steps: "
        + localSteps.size() + " (at least " + MIN_LOCAL_STEP_HISTORIES + ")");
    Set<String> covered = new TreeSet<>();
    localSteps.values().forEach(covered::addAll);
    Set<String> missing = new TreeSet<>(LOCAL_STEPS_COVERED);
    missing.removeAll(covered);
    ev.check(missing.isEmpty(), "the default-path histories run every database step locally, missing: " + missing);
    List<String> newest = new ArrayList<>();
    for (Path p : Histories.recorded()) {
      if (Histories.hasVersionMarker(Histories.read(p), NEWEST_CHANGE)) newest.add(p.getFileName().toString());
    }
    ev.check(newest.size() >= NEWEST_BRANCH_HISTORIES, "histories take the newest branch (" + NEWEST_CHANGE + "): "
        + newest.size() + " " + newest + " (at least " + NEWEST_BRANCH_HISTORIES + ")");
  }

  /** The workflow's sources (its package), where its change ids are asked. */
  static final Path WORKFLOW_SOURCES = Path.of("..", "workflows", "src", "main", "java", "io", "flashsale", "workflows");

  /**
   * The change ids today's workflow asks, read from its sources: each {@code Workflow.getVersion}
   * call's first argument, a literal or a constant of {@code ChangeIds} (so a new id cannot be left
   * out of the check below).
   */
  static Set<String> liveChangeIds() throws Exception {
    Class<?> changeIds = Class.forName("io.flashsale.workflows.ChangeIds");
    java.util.regex.Pattern call = java.util.regex.Pattern
        .compile("getVersion\\(\\s*(?:\"([^\"]+)\"|(?:ChangeIds\\.)?([A-Z][A-Z_]+)\\b)");
    Set<String> ids = new TreeSet<>();
    List<Path> sources;
    try (var files = java.nio.file.Files.list(WORKFLOW_SOURCES)) {
      sources = files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
    }
    for (Path source : sources) {
      java.util.regex.Matcher m = call.matcher(java.nio.file.Files.readString(source));
      while (m.find()) {
        if (m.group(1) != null) {
          ids.add(m.group(1));
        } else {
          java.lang.reflect.Field f = changeIds.getDeclaredField(m.group(2));
          f.setAccessible(true);
          ids.add((String) f.get(null));
        }
      }
    }
    return ids;
  }

  /** Each change id the workflow still asks has its new side in the folder: some recorded history carries its marker. */
  @Test
  void everyLiveChangeHasAHistoryOfItsNewSide() throws Exception {
    Set<String> live = liveChangeIds();
    ev.check(live.contains(NEWEST_CHANGE) && live.size() >= 2, "change ids read from the workflow's source: " + live);
    Map<String, List<String>> carriers = new TreeMap<>();
    for (String id : live) carriers.put(id, new ArrayList<>());
    for (Path p : Histories.recorded()) {
      List<HistoryEvent> events = Histories.read(p);
      for (String id : live) {
        if (Histories.hasVersionMarker(events, id)) carriers.get(id).add(p.getFileName().toString());
      }
    }
    carriers.forEach((id, files) -> ev.note(id + ": " + files.size() + " histories"));
    List<String> uncovered = carriers.entrySet().stream().filter(e -> e.getValue().isEmpty()).map(Map.Entry::getKey).toList();
    ev.check(uncovered.isEmpty(), "every live change id has a recorded history of its new side, missing: " + uncovered);
  }

  /**
   * The paths of owned-deadlines (docs/DESIGN.md §Every order ends) are recorded by the code that
   * takes them: each history below carries the marker, so a later change to one of them cannot
   * slip past the gate. The database steps' activity-task fallback and a charge that hit its
   * start bound are recorded too.
   */
  static final List<String> OWNED_DEADLINE_PATHS = List.of("wf-lost-pay-unknown-at-expiry-closed-failed.json",
      "wf-lost-pay-found-at-a-wake-up-paid.json", "wf-unknown-hour-outage-attention-paid.json",
      "wf-refund-refused-attention-refunded.json", "wf-refund-aged-attention-refunded.json",
      "wf-notice-ends-the-convergence-round.json", "wf-adopted-lost-create-past-deadline.json",
      "wf-cancel-update-answered-at-workflow-cancel.json");

  @Test
  void theNewPathsAreRecorded() throws Exception {
    Map<String, Path> byName = new TreeMap<>();
    for (Path p : Histories.recorded()) byName.put(p.getFileName().toString(), p);
    for (String name : OWNED_DEADLINE_PATHS) {
      Path p = byName.get(name);
      ev.check(p != null && Histories.hasVersionMarker(Histories.read(p), "owned-deadlines"),
          name + " is recorded with the owned-deadlines marker");
    }
    for (String name : List.of("wf-local-step-fallback-to-activity-task.json",
        "wf-charge-start-bound-failed-late-charge-refunded.json", "wf-charge-on-the-channel-queue.json")) {
      ev.check(byName.containsKey(name), name + " is recorded");
    }
  }

  /**
   * Events per path (docs/DESIGN.md, evidence/bench/PERFORMANCE.md) are counted on histories that
   * ran to their end: every {@code path-*} history closes the run; the counts are printed.
   */
  @Test
  void eventsPerPathComeFromHistoriesThatRanToTheirEnd() throws Exception {
    int paths = 0;
    for (Path p : Histories.recorded()) {
      String name = p.getFileName().toString();
      if (!name.startsWith("path-")) continue;
      paths++;
      List<HistoryEvent> events = Histories.read(p);
      io.temporal.api.enums.v1.EventType last = events.get(events.size() - 1).getEventType();
      ev.note("EVENTS " + name.replace(".json", "") + ": " + events.size());
      ev.check(last == io.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
          name + " ran to its end (" + last + ")");
    }
    ev.check(paths >= 8, "per-path histories recorded: " + paths);
  }

  /**
   * The histories the warm-up replays before the service reports healthy (bundled with the
   * workflows) are the gate's recordings of today's paid and expired paths, byte for byte: a path
   * recorded again here cannot leave the warm-up compiling an older one.
   */
  @Test
  void theWarmUpReplaysTheRecordedPaths() throws Exception {
    Map<String, String> copies = Map.of("order-paid.json", "path-dev-server-paid.json",
        "order-expired.json", "path-dev-server-expired.json");
    for (Map.Entry<String, String> copy : new TreeMap<>(copies).entrySet()) {
      byte[] bundled;
      try (var in = OrderWorkflowImpl.class.getResourceAsStream("warm-up/" + copy.getKey())) {
        ev.check(in != null, "the warm-up bundles " + copy.getKey());
        bundled = in.readAllBytes();
      }
      byte[] recorded = java.nio.file.Files.readAllBytes(
          Histories.recorded().get(0).getParent().resolve(copy.getValue()));
      ev.check(java.util.Arrays.equals(bundled, recorded),
          "the warm-up's " + copy.getKey() + " is the recorded " + copy.getValue());
    }
  }

  /** The guard itself: a workflow that schedules something else first must not replay. */
  @Test
  void aChangedWorkflowDoesNotReplay() throws Exception {
    ReplayGate.Loaded all = ReplayGate.fromDirectory(Histories.recorded().get(0).getParent());
    for (String name : List.of("c2901-paid.json", "c2901-paid-local-steps.json")) {
      ReplayGate.Report report = new ReplayGate(ChangedOrderWorkflow.class)
          .replay(all.histories().stream().filter(h -> h.name().equals(name)).toList());
      report.failures().forEach(f -> ev.note("changed workflow on " + f.line()));
      ev.check(report.historiesRead() == 1 && report.failures().size() == 1
              && report.failures().get(0).reason().startsWith("NonDeterministicException"),
          "a workflow changed without Workflow.getVersion does not replay " + name + " (nondeterminism)");
    }
  }

  /** OrderWorkflowImpl with one unversioned change: a timer before anything else. */
  public static class ChangedOrderWorkflow extends OrderWorkflowImpl {
    @io.temporal.workflow.WorkflowInit
    public ChangedOrderWorkflow(io.flashsale.workflows.OrderStart start) {
      super(start);
    }

    @Override
    public void run(io.flashsale.workflows.OrderStart start) {
      io.temporal.workflow.Workflow.sleep(java.time.Duration.ofSeconds(1));
      super.run(start);
    }
  }
}
