package io.flashsale.devstack.replay;

import com.google.protobuf.ByteString;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.filter.v1.StartTimeFilter;
import io.temporal.api.filter.v1.WorkflowTypeFilter;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.workflowservice.v1.CountWorkflowExecutionsRequest;
import io.temporal.api.workflowservice.v1.ListClosedWorkflowExecutionsRequest;
import io.temporal.api.workflowservice.v1.ListClosedWorkflowExecutionsResponse;
import io.temporal.api.workflowservice.v1.ListOpenWorkflowExecutionsRequest;
import io.temporal.api.workflowservice.v1.ListOpenWorkflowExecutionsResponse;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.WorkflowReplayer;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The replay gate: before a workflow change is deployed, every history it would meet (recorded
 * ones, or recent executions listed from the engine) must replay against the new code. A change
 * that alters the commands a history recorded, without {@code Workflow.getVersion}, is
 * nondeterministic and fails here instead of failing workflow tasks in production.
 *
 * <p>Pure API: sources give {@link NamedHistory} lists (plus what could not be read), {@link
 * #replay} turns them into a {@link Report}. Nothing here prints or exits.
 */
public final class ReplayGate {
  /** The visibility query used when none is given: every order workflow. */
  public static final String DEFAULT_QUERY = "WorkflowType = 'OrderWorkflow'";

  /**
   * How many executions the engine mode replays at most; more matching fails the gate ({@link
   * TooManyRuns}) rather than replaying some.
   */
  public static final int DEFAULT_LIMIT = 1000;

  private static final int MAX_REASON = 400;

  /**
   * How long a replayed workflow task may hold its thread. The worker's default (1 s) is a
   * production guard against workflow code that blocks; a replay has no deadline, and on a
   * loaded machine a cold JVM's first task (class loading, the first deserialisations) takes
   * longer than 1 s, which failed healthy histories as PotentialDeadlockException. A real
   * endless loop still fails, after this long.
   */
  static final long REPLAY_DEADLOCK_TIMEOUT_MS = 60_000;
  private static final String NON_DETERMINISTIC_PACKAGE = "io.temporal.worker.";
  private static final String NON_DETERMINISTIC = NON_DETERMINISTIC_PACKAGE + "NonDeterministicException: ";
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();
  private static final Pattern TYPE_ONLY =
      Pattern.compile("^\\s*WorkflowType\\s*=\\s*(?:'([^']*)'|\"([^\"]*)\")\\s*$");

  /** One history to replay; name is the file name (folder) or workflow id (engine). */
  public record NamedHistory(String name, WorkflowExecutionHistory history) {
    public NamedHistory {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(history, "history");
    }
  }

  public enum Status { OK, FAILED }

  /** The verdict for one history (or for one file / execution that could not be read). */
  public record Outcome(String name, Status status, String reason) {
    public static Outcome ok(String name) {
      return new Outcome(name, Status.OK, null);
    }

    public static Outcome failed(String name, String reason) {
      return new Outcome(name, Status.FAILED, reason);
    }

    public boolean isOk() {
      return status == Status.OK;
    }

    /** {@code OK <name>} or {@code FAILED <name>: <reason>}. */
    public String line() {
      return isOk() ? "OK " + name : "FAILED " + name + ": " + reason;
    }
  }

  /**
   * Histories read from a source, and what could not be read there (each already a FAILED
   * outcome naming the file or the execution).
   */
  public record Loaded(List<NamedHistory> histories, List<Outcome> unreadable) {
    public Loaded {
      histories = List.copyOf(histories);
      unreadable = List.copyOf(unreadable);
    }
  }

  /**
   * Everything the gate checked, in source order: unreadable entries first, then one outcome per
   * history replayed. {@code historiesRead} is how many histories were actually replayed.
   */
  public record Report(List<Outcome> outcomes, int historiesRead) {
    public Report {
      outcomes = List.copyOf(outcomes);
    }

    public List<Outcome> failures() {
      return outcomes.stream().filter(o -> !o.isOk()).toList();
    }

    public List<String> failedNames() {
      return failures().stream().map(Outcome::name).toList();
    }

    public boolean passed() {
      return historiesRead > 0 && failures().isEmpty();
    }

    /** {@code replayed=N failed=M}: N is every entry checked (histories and unreadable files). */
    public String summary() {
      return "replayed=" + outcomes.size() + " failed=" + failures().size();
    }
  }

  private final List<Class<?>> workflowClasses;
  /** Null: the SDK's default converter (clear payloads only). */
  private io.temporal.common.converter.DataConverter dataConverter;

  /** The gate for the current order workflow, {@link OrderWorkflowImpl}. */
  public ReplayGate() {
    this(OrderWorkflowImpl.class);
  }

  /** The gate for the given workflow implementation(s): the code the histories must replay on. */
  public ReplayGate(Class<?> workflowClass, Class<?>... moreWorkflowClasses) {
    List<Class<?>> all = new ArrayList<>();
    all.add(Objects.requireNonNull(workflowClass, "workflowClass"));
    all.addAll(List.of(moreWorkflowClasses));
    this.workflowClasses = List.copyOf(all);
  }

  /**
   * Replays with this converter: encrypted histories need the payload codec with every key that
   * sealed them (docs/DESIGN.md §Payload encryption). Returns this gate.
   */
  public ReplayGate decodingWith(io.temporal.common.converter.DataConverter converter) {
    this.dataConverter = converter;
    return this;
  }

  public List<Class<?>> workflowClasses() {
    return workflowClasses;
  }

  // ---------------------------------------------------------------- replay

  /**
   * Replays every history against the workflow classes, one by one on one replay worker, so one
   * failure never hides another and two runs with one workflow id keep their own verdict.
   */
  public Report replay(List<NamedHistory> histories) {
    List<Outcome> outcomes = new ArrayList<>();
    if (histories.isEmpty()) return new Report(outcomes, 0);
    io.temporal.testing.TestEnvironmentOptions.Builder options = io.temporal.testing.TestEnvironmentOptions.newBuilder();
    if (dataConverter != null) {
      options.setWorkflowClientOptions(WorkflowClientOptions.newBuilder().setDataConverter(dataConverter).build());
    }
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance(options.build())) {
      Worker worker = env.newWorker("flashsale-replay-gate",
          WorkerOptions.newBuilder().setDefaultDeadlockDetectionTimeout(REPLAY_DEADLOCK_TIMEOUT_MS).build());
      worker.registerWorkflowImplementationTypes(workflowClasses.toArray(new Class<?>[0]));
      for (NamedHistory h : histories) {
        try {
          WorkflowReplayer.replayWorkflowExecution(h.history(), worker);
          outcomes.add(Outcome.ok(h.name()));
        } catch (Throwable e) { // a nondeterminism error, or whatever the workflow code threw
          if (e instanceof VirtualMachineError vme && !(e instanceof StackOverflowError)) throw vme;
          outcomes.add(Outcome.failed(h.name(), reason(e)));
        }
      }
    }
    return new Report(outcomes, histories.size());
  }

  /** Replays what was loaded; the unreadable entries stay in the report as failures. */
  public Report replay(Loaded loaded) {
    Report replayed = replay(loaded.histories());
    List<Outcome> all = new ArrayList<>(loaded.unreadable());
    all.addAll(replayed.outcomes());
    return new Report(all, replayed.historiesRead());
  }

  /** {@link #fromDirectory} then {@link #replay(Loaded)}. */
  public Report replayDirectory(Path dir) throws IOException {
    return replay(fromDirectory(dir));
  }

  /** {@link #fromEngine} then {@link #replay(Loaded)}. */
  public Report replayEngine(WorkflowServiceStubs service, String namespace, String query, int limit) {
    return replay(fromEngine(service, namespace, query, limit));
  }

  // ---------------------------------------------------------------- sources

  /**
   * Every {@code *.json} directly in {@code dir}, by name, parsed with {@link
   * WorkflowExecutionHistory#fromJson}: the JSON {@code WorkflowClient.fetchHistory(id).toJson}
   * and {@code temporal workflow show --output json} write. A file that is not such a history is
   * an unreadable entry named by its file name, never an exception.
   *
   * @throws IOException when the folder itself cannot be listed (missing, not a folder)
   */
  public static Loaded fromDirectory(Path dir) throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.getFileName().toString().endsWith(".json") && Files.isRegularFile(p))
          .sorted(Comparator.comparing(p -> p.getFileName().toString()))
          .toList();
    }
    List<NamedHistory> histories = new ArrayList<>();
    List<Outcome> unreadable = new ArrayList<>();
    for (Path p : files) {
      String name = p.getFileName().toString();
      try {
        String json = Files.readString(p);
        String shape = notHistoryJson(json);
        if (shape != null) {
          unreadable.add(Outcome.failed(name, "not a workflow history: " + shape));
          continue;
        }
        WorkflowExecutionHistory h = WorkflowExecutionHistory.fromJson(json);
        String problem = notAHistory(h);
        if (problem != null) {
          unreadable.add(Outcome.failed(name, "not a workflow history: " + problem));
        } else {
          histories.add(new NamedHistory(name, h));
        }
      } catch (Exception e) {
        unreadable.add(Outcome.failed(name, "not a workflow history: " + reason(e)));
      }
    }
    return new Loaded(histories, unreadable);
  }

  /**
   * More executions match the engine query than the gate was allowed to replay. Nothing is
   * replayed then: a gate that dropped the runs past its limit would pass without having seen
   * them. {@code matched} is the engine's count, or -1 when it could not count (then more than
   * {@code limit} were listed).
   */
  public static final class TooManyRuns extends RuntimeException {
    private final String query;
    private final long matched;
    private final int limit;

    TooManyRuns(String query, long matched, int limit) {
      super((matched >= 0 ? matched + " runs match" : "more than " + limit + " runs match") + " the query "
          + query + ", more than the limit of " + limit + "; nothing was replayed: rerun with --limit "
          + (matched >= 0 ? matched : "N (N > " + limit + ")")
          + " to replay them all, or narrow --query (e.g. " + DEFAULT_QUERY + " AND ExecutionStatus = 'Running')");
      this.query = query;
      this.matched = matched;
      this.limit = limit;
    }

    public String query() {
      return query;
    }

    /** How many runs the engine counted for the query; -1 when it could not count them. */
    public long matched() {
      return matched;
    }

    public int limit() {
      return limit;
    }
  }

  /**
   * Every execution the visibility query lists (running, closed, continued-as-new runs alike),
   * oldest start first, and each one's history (fetchHistory(workflowId, runId)). Oldest first
   * because the oldest runs were started by the oldest code: they are the histories most likely
   * to take a branch the new code changed, so they come first in the report. A run listed more
   * than once under one workflow id is named {@code workflowId/runId}; a history that cannot be
   * fetched is an unreadable entry.
   *
   * <p>The gate replays every match or none: when more than {@code limit} match it throws {@link
   * TooManyRuns} (with the engine's count) instead of replaying some. So the order in which the
   * engine lists does not matter: at most {@code limit + 1} are listed and sorted here, by start
   * time (the dev server's SQLite visibility has no {@code ORDER BY}; see DESIGN.md).
   *
   * <p>An engine without visibility queries (the temporal-testing server the embedded stack runs)
   * answers UNIMPLEMENTED; then the open and closed listings are used, which can only filter by
   * workflow type, so only a query of the form {@code WorkflowType = 'X'} works there.
   *
   * @throws TooManyRuns when more than {@code limit} executions match
   * @throws StatusRuntimeException when the engine cannot be listed (unreachable, bad query)
   * @throws IllegalStateException when the engine has no visibility queries and the query is not
   *     a plain workflow type filter
   */
  public static Loaded fromEngine(WorkflowServiceStubs service, String namespace, String query, int limit) {
    if (limit <= 0) throw new IllegalArgumentException("limit must be > 0: " + limit);
    String q = query == null || query.isBlank() ? DEFAULT_QUERY : query.trim();
    List<WorkflowExecutionInfo> executions = oldestFirst(service, namespace, q, limit);

    Map<String, Integer> perId = new HashMap<>();
    for (WorkflowExecutionInfo e : executions) perId.merge(e.getExecution().getWorkflowId(), 1, Integer::sum);

    WorkflowClient client =
        WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace(namespace).build());
    List<NamedHistory> histories = new ArrayList<>();
    List<Outcome> unreadable = new ArrayList<>();
    for (WorkflowExecutionInfo e : executions) {
      String id = e.getExecution().getWorkflowId();
      String runId = e.getExecution().getRunId();
      String name = perId.get(id) > 1 ? id + "/" + runId : id;
      try {
        WorkflowExecutionHistory h = client.fetchHistory(id, runId);
        String problem = notAHistory(h);
        if (problem != null) {
          unreadable.add(Outcome.failed(name, "history not usable: " + problem));
        } else {
          histories.add(new NamedHistory(name, h));
        }
      } catch (Exception ex) {
        unreadable.add(Outcome.failed(name, "history not fetched: " + reason(ex)));
      }
    }
    return new Loaded(histories, unreadable);
  }

  /**
   * The executions the query names, oldest start first: all of them, at most {@code limit}.
   *
   * @throws TooManyRuns when more match
   */
  static List<WorkflowExecutionInfo> oldestFirst(WorkflowServiceStubs service, String namespace, String query,
      int limit) {
    List<WorkflowExecutionInfo> found = new ArrayList<>();
    boolean visibility = true;
    try {
      ByteString token = ByteString.EMPTY;
      do {
        ListWorkflowExecutionsResponse r = service.blockingStub().listWorkflowExecutions(
            ListWorkflowExecutionsRequest.newBuilder()
                .setNamespace(namespace)
                .setQuery(query)
                .setPageSize(Math.min(limit + 1, 1000))
                .setNextPageToken(token)
                .build());
        found.addAll(r.getExecutionsList());
        token = r.getNextPageToken();
      } while (!token.isEmpty() && unique(found).size() <= limit);
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != io.grpc.Status.Code.UNIMPLEMENTED) throw e;
      visibility = false;
      found = listWithoutVisibility(service, namespace, query);
    }
    List<WorkflowExecutionInfo> runs = unique(found);
    if (runs.size() > limit) {
      // the listing without visibility is complete, so its size is the count
      throw new TooManyRuns(query, visibility ? count(service, namespace, query) : runs.size(), limit);
    }
    return runs.stream()
        .sorted(Comparator.comparingLong((WorkflowExecutionInfo e) -> e.getStartTime().getSeconds())
            .thenComparingInt(e -> e.getStartTime().getNanos())
            .thenComparing(e -> e.getExecution().getRunId()))
        .toList();
  }

  /** The engine's count of the query's executions; -1 when it cannot count (the message says "more than"). */
  private static long count(WorkflowServiceStubs service, String namespace, String query) {
    try {
      return service.blockingStub().countWorkflowExecutions(CountWorkflowExecutionsRequest.newBuilder()
          .setNamespace(namespace).setQuery(query).build()).getCount();
    } catch (StatusRuntimeException e) {
      return -1;
    }
  }

  /** Each run once (a listing that pages while runs start or close may list one twice), in listing order. */
  private static List<WorkflowExecutionInfo> unique(List<WorkflowExecutionInfo> found) {
    Map<String, WorkflowExecutionInfo> byRun = new java.util.LinkedHashMap<>();
    for (WorkflowExecutionInfo e : found) {
      byRun.putIfAbsent(e.getExecution().getWorkflowId() + "/" + e.getExecution().getRunId(), e);
    }
    return List.copyOf(byRun.values());
  }

  /** Every open and closed execution of the type, all pages: all a test server can answer. */
  private static List<WorkflowExecutionInfo> listWithoutVisibility(WorkflowServiceStubs service, String namespace,
      String query) {
    Matcher m = TYPE_ONLY.matcher(query);
    if (!m.matches()) {
      throw new IllegalStateException("this engine has no visibility queries (ListWorkflowExecutions is"
          + " unimplemented); only a query of the form WorkflowType = 'X' can be answered here, not: " + query);
    }
    String type = m.group(1) != null ? m.group(1) : m.group(2);
    StartTimeFilter all = StartTimeFilter.newBuilder()
        .setEarliestTime(com.google.protobuf.Timestamp.getDefaultInstance())
        .setLatestTime(com.google.protobuf.Timestamp.newBuilder().setSeconds(253402300799L)) // 9999-12-31
        .build();
    WorkflowTypeFilter typeFilter = WorkflowTypeFilter.newBuilder().setName(type).build();
    List<WorkflowExecutionInfo> found = new ArrayList<>();
    ByteString token = ByteString.EMPTY;
    do {
      ListOpenWorkflowExecutionsResponse r = service.blockingStub().listOpenWorkflowExecutions(
          ListOpenWorkflowExecutionsRequest.newBuilder().setNamespace(namespace).setMaximumPageSize(1000)
              .setStartTimeFilter(all).setTypeFilter(typeFilter).setNextPageToken(token).build());
      found.addAll(r.getExecutionsList());
      token = r.getNextPageToken();
    } while (!token.isEmpty());
    token = ByteString.EMPTY;
    do {
      ListClosedWorkflowExecutionsResponse r = service.blockingStub().listClosedWorkflowExecutions(
          ListClosedWorkflowExecutionsRequest.newBuilder().setNamespace(namespace).setMaximumPageSize(1000)
              .setStartTimeFilter(all).setTypeFilter(typeFilter).setNextPageToken(token).build());
      found.addAll(r.getExecutionsList());
      token = r.getNextPageToken();
    } while (!token.isEmpty());
    // the filter is a hint there: keep the type check here
    return found.stream().filter(e -> type.equals(e.getType().getName())).toList();
  }

  // ---------------------------------------------------------------- helpers

  /** Null when {@code json} is an object with a non-empty "events" array, else why not. */
  private static String notHistoryJson(String json) {
    com.fasterxml.jackson.databind.JsonNode tree;
    try {
      tree = JSON.readTree(json);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      String msg = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
      com.fasterxml.jackson.core.JsonLocation at = e.getLocation();
      return oneLine("invalid JSON: " + msg + (at == null ? "" : " (line " + at.getLineNr() + ", column "
          + at.getColumnNr() + ")"));
    }
    if (tree == null || tree.isMissingNode()) return "empty file";
    if (!tree.isObject()) return "JSON " + tree.getNodeType().name().toLowerCase() + ", not an object";
    com.fasterxml.jackson.databind.JsonNode events = tree.get("events");
    if (events == null || !events.isArray()) return "no \"events\" array";
    if (events.isEmpty()) return "no events";
    return null;
  }

  /** Null when {@code h} looks like a workflow history, else why not. */
  private static String notAHistory(WorkflowExecutionHistory h) {
    if (h.getEvents().isEmpty()) return "no events";
    EventType first = h.getEvents().get(0).getEventType();
    if (first != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED) {
      return "first event is " + first + ", not WorkflowExecutionStarted";
    }
    return null;
  }

  /**
   * One line: the nondeterminism error when there is one (as a cause, or quoted in the message
   * of the replay's query failure), else the root cause, as {@code SimpleName: message}; stack
   * traces quoted in messages dropped, whitespace folded, at most 400 characters.
   */
  static String reason(Throwable e) {
    Throwable chosen = null;
    Throwable root = e;
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (chosen == null && t.getClass().getSimpleName().contains("NonDeterministic")) chosen = t;
      root = t;
      if (t.getCause() == t) break;
    }
    if (chosen == null) {
      for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
        String m = t.getMessage();
        int at = m == null ? -1 : m.indexOf(NON_DETERMINISTIC);
        if (at >= 0) return oneLine(m.substring(at + NON_DETERMINISTIC_PACKAGE.length()));
      }
      // a replay's query failure quotes the workflow task's failure with its trace: its
      // innermost cause says why (e.g. PotentialDeadlockException), the outer message does not
      String quoted = root.getMessage() == null ? null : innermostQuotedCause(root.getMessage());
      if (quoted != null) return oneLine(quoted);
      chosen = root;
    }
    String msg = chosen.getMessage() == null ? "" : chosen.getMessage();
    return oneLine(chosen.getClass().getSimpleName() + (msg.isBlank() ? "" : ": " + msg));
  }

  /** {@code SimpleName: message} of the last {@code Caused by: } line a quoted stack trace holds, or null. */
  private static String innermostQuotedCause(String message) {
    int at = message.lastIndexOf("\nCaused by: ");
    if (at < 0) return null;
    String line = message.substring(at + "\nCaused by: ".length());
    int end = line.indexOf('\n');
    if (end >= 0) line = line.substring(0, end);
    int colon = line.indexOf(": ");
    String type = colon < 0 ? line : line.substring(0, colon);
    String simple = type.substring(type.lastIndexOf('.') + 1);
    return simple + (colon < 0 ? "" : line.substring(colon));
  }

  private static String oneLine(String text) {
    int trace = text.indexOf("\n\tat ");
    String line = (trace >= 0 ? text.substring(0, trace) : text).replaceAll("\\s+", " ").trim();
    return line.length() <= MAX_REASON ? line : line.substring(0, MAX_REASON - 3) + "...";
  }
}
