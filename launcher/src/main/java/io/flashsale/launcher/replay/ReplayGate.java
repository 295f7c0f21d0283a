package io.flashsale.launcher.replay;

import com.google.protobuf.ByteString;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.filter.v1.StartTimeFilter;
import io.temporal.api.filter.v1.WorkflowTypeFilter;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
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

  public static final int DEFAULT_LIMIT = 50;

  private static final int MAX_REASON = 400;
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
    try (TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance()) {
      Worker worker = env.newWorker("flashsale-replay-gate");
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
   * Executions from the engine and each one's history. With the default query: every RUNNING
   * order workflow (the ones a deploy will actually replay, often older than the newest) plus the
   * newest {@code limit} closed ones; with another query: what it lists, newest first, at most
   * {@code limit}. Each one's history
   * (fetchHistory(workflowId, runId)). Closed, running and continued-as-new runs all count; a run
   * listed more than once under one workflow id is named {@code workflowId/runId}. A history that
   * cannot be fetched is an unreadable entry.
   *
   * <p>An engine without visibility queries (the temporal-testing server the embedded stack runs)
   * answers UNIMPLEMENTED; then the open and closed listings are used, which can only filter by
   * workflow type, so only a query of the form {@code WorkflowType = 'X'} works there.
   *
   * @throws StatusRuntimeException when the engine cannot be listed (unreachable, bad query)
   * @throws IllegalStateException when the engine has no visibility queries and the query is not
   *     a plain workflow type filter
   */
  public static Loaded fromEngine(WorkflowServiceStubs service, String namespace, String query, int limit) {
    if (limit <= 0) throw new IllegalArgumentException("limit must be > 0: " + limit);
    String q = query == null || query.isBlank() ? DEFAULT_QUERY : query;
    List<WorkflowExecutionInfo> executions = DEFAULT_QUERY.equals(q.trim())
        ? openThenRecent(service, namespace, limit)
        : listExecutions(service, namespace, q, limit);

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

  /** Every running order workflow, then the newest closed ones; one visibility-less listing otherwise. */
  private static List<WorkflowExecutionInfo> openThenRecent(WorkflowServiceStubs service, String namespace, int limit) {
    List<WorkflowExecutionInfo> open;
    try {
      open = listExecutions(service, namespace, DEFAULT_QUERY + " AND ExecutionStatus = 'Running'", MAX_OPEN);
    } catch (IllegalStateException noVisibility) {
      return listExecutions(service, namespace, DEFAULT_QUERY, limit);
    }
    List<WorkflowExecutionInfo> all = new ArrayList<>(open);
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (WorkflowExecutionInfo e : open) seen.add(e.getExecution().getRunId());
    for (WorkflowExecutionInfo e : listExecutions(service, namespace,
        DEFAULT_QUERY + " AND ExecutionStatus != 'Running'", limit)) {
      if (seen.add(e.getExecution().getRunId())) all.add(e);
    }
    return all;
  }

  /** Open executions replayed at most: a bound, so a runaway listing cannot take the gate down. */
  private static final int MAX_OPEN = 10_000;

  /** The executions the query names, newest start first, at most {@code limit}. */
  static List<WorkflowExecutionInfo> listExecutions(WorkflowServiceStubs service, String namespace, String query,
      int limit) {
    List<WorkflowExecutionInfo> found = new ArrayList<>();
    try {
      ByteString token = ByteString.EMPTY;
      do {
        ListWorkflowExecutionsResponse r = service.blockingStub().listWorkflowExecutions(
            ListWorkflowExecutionsRequest.newBuilder()
                .setNamespace(namespace)
                .setQuery(query)
                .setPageSize(Math.min(limit, 1000))
                .setNextPageToken(token)
                .build());
        found.addAll(r.getExecutionsList());
        token = r.getNextPageToken();
      } while (!token.isEmpty() && found.size() < limit);
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() != io.grpc.Status.Code.UNIMPLEMENTED) throw e;
      found = listWithoutVisibility(service, namespace, query, limit);
    }
    return newestFirst(found, limit);
  }

  /** Open + closed listings, filtered by workflow type: all a test server can answer. */
  private static List<WorkflowExecutionInfo> listWithoutVisibility(WorkflowServiceStubs service, String namespace,
      String query, int limit) {
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
    int pages = 0;
    do {
      ListOpenWorkflowExecutionsResponse r = service.blockingStub().listOpenWorkflowExecutions(
          ListOpenWorkflowExecutionsRequest.newBuilder().setNamespace(namespace).setMaximumPageSize(1000)
              .setStartTimeFilter(all).setTypeFilter(typeFilter).setNextPageToken(token).build());
      found.addAll(r.getExecutionsList());
      token = r.getNextPageToken();
    } while (!token.isEmpty() && ++pages < 100);
    token = ByteString.EMPTY;
    pages = 0;
    do {
      ListClosedWorkflowExecutionsResponse r = service.blockingStub().listClosedWorkflowExecutions(
          ListClosedWorkflowExecutionsRequest.newBuilder().setNamespace(namespace).setMaximumPageSize(1000)
              .setStartTimeFilter(all).setTypeFilter(typeFilter).setNextPageToken(token).build());
      found.addAll(r.getExecutionsList());
      token = r.getNextPageToken();
    } while (!token.isEmpty() && ++pages < 100);
    // the filter is a hint there: keep the type check here
    return found.stream().filter(e -> type.equals(e.getType().getName())).toList();
  }

  private static List<WorkflowExecutionInfo> newestFirst(List<WorkflowExecutionInfo> found, int limit) {
    Map<String, WorkflowExecutionInfo> unique = new java.util.LinkedHashMap<>();
    for (WorkflowExecutionInfo e : found) {
      unique.putIfAbsent(e.getExecution().getWorkflowId() + "/" + e.getExecution().getRunId(), e);
    }
    return unique.values().stream()
        .sorted(Comparator.comparingLong((WorkflowExecutionInfo e) -> e.getStartTime().getSeconds())
            .thenComparingInt(e -> e.getStartTime().getNanos())
            .reversed())
        .limit(limit)
        .toList();
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
      chosen = root;
    }
    String msg = chosen.getMessage() == null ? "" : chosen.getMessage();
    return oneLine(chosen.getClass().getSimpleName() + (msg.isBlank() ? "" : ": " + msg));
  }

  private static String oneLine(String text) {
    int trace = text.indexOf("\n\tat ");
    String line = (trace >= 0 ? text.substring(0, trace) : text).replaceAll("\\s+", " ").trim();
    return line.length() <= MAX_REASON ? line : line.substring(0, MAX_REASON - 3) + "...";
  }
}
