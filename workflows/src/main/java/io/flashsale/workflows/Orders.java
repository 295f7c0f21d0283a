package io.flashsale.workflows;

import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.Notice;
import io.temporal.api.enums.v1.WorkflowIdConflictPolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.BatchRequest;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WithStartWorkflowOperation;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowUpdateStage;

/** The API's side of the order workflow: create by update-with-start, pay/cancel by update, notices by signal. */
public final class Orders {
  /** A client call to the engine that did not answer within the deadline: the caller retries. */
  public static final class DeadlineExceeded extends RuntimeException {
    public DeadlineExceeded(String what, java.time.Duration deadline) {
      super(what + " did not complete within " + deadline.toMillis() + " ms");
    }
  }

  private final WorkflowClient client;
  private final OrderSettings settings;
  private final java.time.Duration deadline;
  private final java.time.Duration createDeadline;
  private final String taskQueue;
  /** Engine calls run here, so a request thread waits at most the deadline (the call itself may go on). */
  private final java.util.concurrent.ExecutorService calls = java.util.concurrent.Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "engine-call");
    t.setDaemon(true);
    return t;
  });

  public Orders(WorkflowClient client, OrderSettings settings) {
    this(client, settings, java.time.Duration.ofSeconds(10));
  }

  public Orders(WorkflowClient client, OrderSettings settings, java.time.Duration deadline) {
    this(client, settings, deadline, WorkflowIds.TASK_QUEUE);
  }

  /**
   * Runs started here go to taskQueue: {@link WorkflowIds#TASK_QUEUE} in production; a test
   * engine's worker may poll a queue of its own.
   */
  public Orders(WorkflowClient client, OrderSettings settings, java.time.Duration deadline, String taskQueue) {
    this(client, settings, deadline, deadline, taskQueue);
  }

  /**
   * {@code createDeadline}: a create's own, shorter than the commands' so a buyer in a crowd is
   * answered (503, retry with the same key) before giving up on the page (docs/DESIGN.md §Overload).
   */
  public Orders(WorkflowClient client, OrderSettings settings, java.time.Duration deadline,
      java.time.Duration createDeadline, String taskQueue) {
    this.client = client;
    this.settings = settings;
    this.deadline = deadline;
    this.createDeadline = createDeadline;
    this.taskQueue = taskQueue;
  }

  /**
   * Update-with-start, answered within the deadline. Only calls whose key has no order yet come
   * here (the API answers a retry of an ordered key from its row), so each carries a fresh update
   * id: a create that was refused stored nothing, and a later call with the key is a new attempt on
   * both engines (the dev server would otherwise answer it from the closed refused run). Two calls
   * that race with one key meet in the run, whose create answers the loser REPLAY or KEY_REUSED.
   */
  public CreateResult create(CreateOrder req) {
    return await(startCreate(req));
  }

  /**
   * A create's engine call in this instance: its answer once the engine ends the call (which may
   * be after the create deadline), and whether this request started it or joined one in flight.
   */
  public record CreateCall(String workflowId, CreateOrder request,
      java.util.concurrent.CompletableFuture<CreateResult> answer, boolean started) {}

  /**
   * Creates whose engine call has not ended, by workflow id. A buyer answered 503 at the create
   * deadline sends the key again while the engine still works on the first call; that retry joins
   * the call instead of adding a second update to the run, so an overloaded engine is not handed
   * more work per buyer the longer it falls behind (docs/DESIGN.md §Overload).
   */
  private final java.util.concurrent.ConcurrentHashMap<String, CreateCall> creating =
      new java.util.concurrent.ConcurrentHashMap<>();

  /** The engine call of this request's key still going here, for the same request; or null. */
  public CreateCall createInFlight(CreateOrder req) {
    return joining(creating.get(WorkflowIds.forScope(req.tenant(), req.subject(), req.requestKey())), req);
  }

  /** {@code req} joining {@code running} (a call of its key in flight), or null: none, or another payload. */
  private static CreateCall joining(CreateCall running, CreateOrder req) {
    return running != null && running.request().payload().equals(req.payload())
        ? new CreateCall(running.workflowId(), req, running.answer(), false) : null;
  }

  /**
   * Sends the create to the engine, or joins the key's call already in flight here. The call is
   * given up after the commands' deadline at the latest (its thread interrupted), so {@code
   * answer} always ends.
   */
  public CreateCall startCreate(CreateOrder req) {
    String workflowId = WorkflowIds.forScope(req.tenant(), req.subject(), req.requestKey());
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class, startOptions(workflowId, req.tenant(), req.sku(),
        Visibility.createSummary(req)));
    WithStartWorkflowOperation<Void> start = new WithStartWorkflowOperation<>(wf::run,
        new OrderStart(req.tenant(), req.subject(), req.requestKey(), null, settings));
    UpdateOptions<CreateResult> options =
        UpdateOptions.<CreateResult>newBuilder().setWaitForStage(WorkflowUpdateStage.COMPLETED).build();
    java.util.concurrent.CompletableFuture<CreateResult> answer = new java.util.concurrent.CompletableFuture<>();
    CreateCall mine = new CreateCall(workflowId, req, answer, true);
    CreateCall running = creating.putIfAbsent(workflowId, mine);
    CreateCall joined = joining(running, req);
    if (joined != null) return joined;
    // another payload under a key in flight gets its own call, untracked (the run answers it KEY_REUSED or not)
    boolean tracked = running == null;
    java.util.concurrent.atomic.AtomicReference<java.util.concurrent.Future<?>> call =
        new java.util.concurrent.atomic.AtomicReference<>();
    // the end is attached before the call starts: whatever happens next, the entry goes and the call ends
    answer.orTimeout(deadline.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS).whenComplete((r, e) -> {
      if (tracked) creating.remove(workflowId, mine);
      java.util.concurrent.Future<?> started = call.get();
      if (e instanceof java.util.concurrent.TimeoutException && started != null) started.cancel(true);
    });
    try {
      // the request's trace context goes along, so the client interceptor's spans are children of its span
      call.set(calls.submit(io.opentelemetry.context.Context.current().wrap(() -> {
        try {
          answer.complete(WorkflowClient.executeUpdateWithStart(wf::create, req, options, start));
        } catch (RuntimeException | Error e) {
          answer.completeExceptionally(e);
        }
      })));
    } catch (RuntimeException | Error e) { // not started (the pool refused): the call ends failed
      answer.completeExceptionally(e);
      throw e;
    }
    return mine;
  }

  /** A create's answer within the create deadline; past it DeadlineExceeded, and the call goes on. */
  public CreateResult await(CreateCall c) {
    return within(c.answer(), "create " + c.workflowId(), createDeadline, () -> { }); // past it, the call goes on
  }


  /** idempotencyKey (optional) becomes the update id: a client's retry gets the original answer. */
  public CommandResult pay(String workflowId, String idempotencyKey) {
    return command(workflowId, "pay", idempotencyKey);
  }

  public CommandResult cancel(String workflowId, String idempotencyKey) {
    return command(workflowId, "cancel", idempotencyKey);
  }

  private CommandResult command(String workflowId, String name, String idempotencyKey) {
    UpdateOptions.Builder<CommandResult> options = UpdateOptions.<CommandResult>newBuilder()
        .setUpdateName(name).setResultClass(CommandResult.class).setWaitForStage(WorkflowUpdateStage.COMPLETED);
    if (idempotencyKey != null) options.setUpdateId(name + ":" + idempotencyKey);
    return withDeadline(name + " " + workflowId, deadline, () -> {
      try {
        return client.newUntypedWorkflowStub(workflowId).startUpdate(options.build()).getResult();
      } catch (io.temporal.client.WorkflowUpdateException e) {
        // refused by the update validator: the same answer as from the handler, without history
        CommandResult answer = CommandResult.refusedBy(e);
        if (answer != null) return answer;
        throw e;
      }
    });
  }

  private <T> T withDeadline(String what, java.time.Duration deadline, java.util.function.Supplier<T> call) {
    // the request's trace context goes along, so the client interceptor's spans are children of its span
    java.util.concurrent.Future<T> f = calls.submit(io.opentelemetry.context.Context.current().wrap(call::get));
    return within(f, what, deadline, () -> f.cancel(true));
  }

  /**
   * An engine call's answer within {@code wait}; past it {@code onTimeout} runs and the caller gets
   * DeadlineExceeded, as it does for a create's call given up at the commands' deadline.
   */
  private <T> T within(java.util.concurrent.Future<T> f, String what, java.time.Duration wait, Runnable onTimeout) {
    try {
      return f.get(wait.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      onTimeout.run();
      throw new DeadlineExceeded(what, wait);
    } catch (java.util.concurrent.ExecutionException e) {
      if (e.getCause() instanceof java.util.concurrent.TimeoutException) {
        throw new DeadlineExceeded(what + " (the engine call)", deadline);
      }
      if (e.getCause() instanceof RuntimeException re) throw re;
      throw new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new DeadlineExceeded(what, wait);
    }
  }


  /**
   * A signal to the order's running workflow; false when it has none (its run has ended: a PAID
   * order's run ends with its pay), so the caller can answer the notice from the row before it
   * starts a new run with {@link #notify}.
   */
  public boolean signalRunning(String workflowId, Notice notice) {
    try {
      client.newWorkflowStub(OrderWorkflow.class, workflowId).paymentNotification(notice);
      return true;
    } catch (io.temporal.client.WorkflowNotFoundException ended) {
      return false;
    }
  }

  /**
   * Signal-with-start: a running workflow just gets the signal; an order whose workflow already
   * completed gets a new run that loads it from the database and applies the same rules.
   */
  public void notify(String workflowId, String tenant, String subject, String requestKey, String orderId,
      Notice notice) {
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class, startOptions(workflowId, tenant, null,
        Visibility.lateNoticeSummary(orderId)));
    BatchRequest batch = client.newSignalWithStartRequest();
    batch.add(wf::run, new OrderStart(tenant, subject, requestKey, orderId, settings));
    batch.add(wf::paymentNotification, notice);
    client.signalWithStart(batch);
  }

  /**
   * A new run for an order that has no running workflow (orphan repair): it loads the order and
   * carries on; its reservation expires at the stored deadline (-1: no longer held).
   */
  public boolean resume(String workflowId, String tenant, String subject, String requestKey, String orderId,
      String sku, long reservationExpiresAt) {
    // FAIL, not USE_EXISTING: a run that appeared since the check means this order is no orphan
    WorkflowOptions options = WorkflowOptions.newBuilder(startOptions(workflowId, tenant, sku,
            Visibility.resumedSummary(orderId)))
        .setWorkflowIdConflictPolicy(WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_FAIL)
        .build();
    OrderWorkflow wf = client.newWorkflowStub(OrderWorkflow.class, options);
    try {
      WorkflowClient.start(wf::run, new OrderStart(tenant, subject, requestKey, orderId, settings, reservationExpiresAt,
          null, null));
      return true;
    } catch (io.temporal.client.WorkflowExecutionAlreadyStarted e) {
      return false;
    }
  }

  /** True once the order's workflow holds its order (a resumed run has loaded it). */
  public boolean loaded(String workflowId) {
    try {
      return client.newWorkflowStub(OrderWorkflow.class, workflowId).status().order() != null;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Tenant and SKU are known at start, so the Web UI and visibility can filter on them at once. */
  private WorkflowOptions startOptions(String workflowId, String tenant, String sku, String summary) {
    return WorkflowOptions.newBuilder()
        .setWorkflowId(workflowId)
        .setTypedSearchAttributes(Visibility.atStart(tenant, sku))
        .setStaticSummary(summary)
        .setTaskQueue(taskQueue)
        .setWorkflowIdConflictPolicy(WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
        .build();
  }
}
