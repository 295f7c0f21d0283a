package io.flashsale.launcher;

import io.dropwizard.lifecycle.Managed;
import io.flashsale.workflows.ChannelActivities;
import io.flashsale.workflows.OrderActivities;
import io.flashsale.workflows.OrderWorkflow;
import io.flashsale.workflows.OrderWorkflowImpl;
import io.flashsale.workflows.WorkflowIds;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.operatorservice.v1.AddSearchAttributesRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.OperatorServiceStubs;
import io.temporal.serviceclient.OperatorServiceStubsOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerFactoryOptions;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Connection to the Temporal frontend, the client the API uses and (optionally) the worker. */
public final class TemporalRuntime implements Managed {
  private static final Logger log = LoggerFactory.getLogger(TemporalRuntime.class);

  private final WorkflowServiceStubs service;
  private final WorkflowClient client;
  private final WorkerFactory workers;

  public TemporalRuntime(String target, String namespace, Integer workflowCacheSize) {
    this(target, namespace, workflowCacheSize, null, "");
  }

  /**
   * @param tls null or disabled: plaintext (local engines); else TLS, with a client certificate
   *     for mTLS when one is configured
   * @param apiKey sent as a bearer token on every call (Temporal Cloud API keys); blank = none
   */
  public TemporalRuntime(String target, String namespace, Integer workflowCacheSize,
      FlashsaleConfiguration.TlsSettings tls, String apiKey) {
    this(target, namespace, workflowCacheSize, tls, apiKey, null);
  }

  /** @param metrics null: the SDK's metrics go nowhere; else into its registry (client and worker alike) */
  public TemporalRuntime(String target, String namespace, Integer workflowCacheSize,
      FlashsaleConfiguration.TlsSettings tls, String apiKey, io.flashsale.launcher.observe.SdkMetrics metrics) {
    this(target, namespace, workflowCacheSize, tls, apiKey, metrics, null, null);
  }

  /**
   * @param tracing null: no spans; else the client's and the worker's tracing interceptors (docs/DESIGN.md §Tracing)
   * @param dataConverter null: the SDK's default (payloads in clear text); else client and worker alike use it
   */
  public TemporalRuntime(String target, String namespace, Integer workflowCacheSize,
      FlashsaleConfiguration.TlsSettings tls, String apiKey, io.flashsale.launcher.observe.SdkMetrics metrics,
      io.flashsale.launcher.observe.Tracing tracing, io.temporal.common.converter.DataConverter dataConverter) {
    WorkflowServiceStubsOptions.Builder stubs = stubsOptions(target, tls);
    if (metrics != null) stubs.setMetricsScope(metrics.scope());
    if (apiKey != null && !apiKey.isBlank()) {
      if (tls == null || !tls.enabled) throw new IllegalArgumentException("temporal.apiKey needs temporal.tls.enabled");
      stubs.addApiKey(() -> apiKey);
    }
    this.service = WorkflowServiceStubs.newServiceStubs(stubs.build());
    WorkflowClientOptions.Builder clientOptions = WorkflowClientOptions.newBuilder().setNamespace(namespace);
    if (tracing != null) clientOptions.setInterceptors(tracing.clientInterceptor());
    // the worker built on this client converts with the same converter (docs/DESIGN.md §Payload encryption)
    if (dataConverter != null) clientOptions.setDataConverter(dataConverter);
    this.client = WorkflowClient.newInstance(service, clientOptions.build());
    // the last interceptor is the outermost: tracing makes the task's span current before the log context reads it
    io.temporal.common.interceptors.WorkerInterceptor[] interceptors = tracing == null
        ? new io.temporal.common.interceptors.WorkerInterceptor[] {new io.flashsale.api.observe.OrderMdc.WorkerInterceptor()}
        : new io.temporal.common.interceptors.WorkerInterceptor[] {new io.flashsale.api.observe.OrderMdc.WorkerInterceptor(),
            tracing.workerInterceptor()};
    WorkerFactoryOptions options = cacheOptions(workflowCacheSize).setWorkerInterceptors(interceptors).build();
    this.workers = WorkerFactory.newInstance(client, options);
  }

  /** The workers' sticky cache of {@code workflowCacheSize} runs (null: the SDK's) and the threads it needs. */
  public static WorkerFactoryOptions.Builder cacheOptions(Integer workflowCacheSize) {
    WorkerFactoryOptions.Builder options = WorkerFactoryOptions.newBuilder();
    if (workflowCacheSize != null) {
      options.setWorkflowCacheSize(workflowCacheSize);
      // a cached run keeps its workflow thread (plus one per running handler): too few threads
      // evict runs from the cache, and each evicted run replays its whole history on its next task
      options.setMaxWorkflowThreadCount(Math.max(600, 2 * workflowCacheSize));
    }
    return options;
  }

  /** The connection to {@code target}: plaintext, or TLS (mutual with a client certificate) as {@code tls} says. */
  public static WorkflowServiceStubsOptions.Builder stubsOptions(String target, FlashsaleConfiguration.TlsSettings tls) {
    WorkflowServiceStubsOptions.Builder stubs = WorkflowServiceStubsOptions.newBuilder().setTarget(target);
    if (tls != null && tls.enabled) stubs.setSslContext(sslContext(tls));
    if (tls != null && tls.enabled && !tls.serverName.isBlank()) {
      stubs.setChannelInitializer(channel -> channel.overrideAuthority(tls.serverName));
    }
    return stubs;
  }

  private static io.grpc.netty.shaded.io.netty.handler.ssl.SslContext sslContext(FlashsaleConfiguration.TlsSettings tls) {
    try {
      var builder = io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts.forClient();
      if (!tls.caCertFile.isBlank()) builder.trustManager(new java.io.File(tls.caCertFile));
      if (!tls.clientCertFile.isBlank() || !tls.clientKeyFile.isBlank()) {
        if (tls.clientCertFile.isBlank() || tls.clientKeyFile.isBlank()) {
          throw new IllegalArgumentException("mTLS needs both temporal.tls.clientCertFile and clientKeyFile");
        }
        builder.keyManager(new java.io.File(tls.clientCertFile), new java.io.File(tls.clientKeyFile));
      }
      return builder.build();
    } catch (javax.net.ssl.SSLException e) {
      throw new IllegalArgumentException("temporal.tls: " + e.getMessage(), e);
    }
  }

  /** Waits until the frontend answers for the namespace (a dev server that just started may not yet). */
  public void awaitReady(String namespace, java.time.Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        service.blockingStub().withDeadlineAfter(2, java.util.concurrent.TimeUnit.SECONDS)
            .describeNamespace(io.temporal.api.workflowservice.v1.DescribeNamespaceRequest.newBuilder()
                .setNamespace(namespace).build());
        return;
      } catch (io.grpc.StatusRuntimeException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("Temporal at namespace " + namespace + " not ready: " + e.getStatus(), e);
        }
        try {
          Thread.sleep(200);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", ie);
        }
      }
    }
  }

  public WorkflowClient client() {
    return client;
  }

  public WorkflowServiceStubs service() {
    return service;
  }

  /** A worker on the orders task queue hosting the workflows, the activities, or both. */
  public void registerWorker(OrderActivities orders, ChannelActivities channel, boolean workflows, boolean activities) {
    registerWorker(orders, channel, workflows, activities, io.temporal.worker.WorkerOptions.getDefaultInstance(),
        WorkflowIds.CHANNEL_TASK_QUEUE);
  }

  /**
   * channelTaskQueue: the queue runs send the channel's activities to ({@code orders.channelTaskQueue}),
   * polled here by a worker of its own when this process runs activities; null: the orders' queue only.
   */
  public void registerWorker(OrderActivities orders, ChannelActivities channel, boolean workflows, boolean activities,
      io.temporal.worker.WorkerOptions options, String channelTaskQueue) {
    if (workflows && !activities) {
      // a workflows-only worker still runs the database steps that its workflows run as local
      // activities, and takes no activity tasks
      options = io.temporal.worker.WorkerOptions.newBuilder(options).setLocalActivityWorkerOnly(true).build();
    }
    Worker worker = workers.newWorker(WorkflowIds.TASK_QUEUE, options);
    if (workflows) worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
    if (activities) {
      // the channel on the orders' queue too: runs started without a channel queue schedule it there
      worker.registerActivitiesImplementations(orders, channel);
      if (channelTaskQueue != null) registerChannelWorker(channelTaskQueue, channel, options);
    } else if (workflows) {
      worker.registerActivitiesImplementations(orders);
    }
  }

  /**
   * The warm-up's runs on this instance's own queue (docs/DESIGN.md §Warm from the first buyer),
   * with the orders' worker options: the same SDK code a create meets, and no run for another process.
   */
  public Worker registerWarmUpWorker(String queue, io.temporal.worker.WorkerOptions orderOptions) {
    // two pollers for the warm-up's four clients; the caller suspends them once the warm-up ended
    Worker worker = workers.newWorker(queue, io.temporal.worker.WorkerOptions.newBuilder(orderOptions)
        .setLocalActivityWorkerOnly(true).setMaxConcurrentWorkflowTaskPollers(2).build());
    worker.registerWorkflowImplementationTypes(io.flashsale.workflows.WarmUpWorkflowImpl.class);
    worker.registerActivitiesImplementations(new io.flashsale.workflows.WarmUpActivities.Echo());
    return worker;
  }

  /**
   * The channel's activities on their own queue with their own pollers and slots: a backlog of
   * database steps on the orders' queue cannot hold a charge past its start bound (docs/DESIGN.md
   * §Every order ends). Channel calls hold no database connection.
   */
  private void registerChannelWorker(String queue, ChannelActivities channel, io.temporal.worker.WorkerOptions orderOptions) {
    int slots = Math.max(16, orderOptions.getMaxConcurrentActivityExecutionSize());
    Worker worker = workers.newWorker(queue, io.temporal.worker.WorkerOptions.newBuilder()
        .setMaxConcurrentActivityExecutionSize(slots)
        .setMaxConcurrentActivityTaskPollers(Math.max(2, orderOptions.getMaxConcurrentActivityTaskPollers()))
        .build());
    worker.registerActivitiesImplementations(channel);
  }

  /**
   * The reconcile workflow and its activity on their own task queue (docs/DESIGN.md §Reconciliation
   * on a schedule): one report at a time per worker.
   */
  public void registerReconcileWorker(io.flashsale.workflows.ReconcileActivities activities) {
    Worker worker = workers.newWorker(io.flashsale.workflows.ReconcileWorkflow.TASK_QUEUE,
        io.temporal.worker.WorkerOptions.newBuilder()
            .setMaxConcurrentActivityExecutionSize(1)
            .setMaxConcurrentActivityTaskPollers(1)
            .setMaxConcurrentWorkflowTaskPollers(2)
            .build());
    worker.registerWorkflowImplementationTypes(io.flashsale.workflows.ReconcileWorkflowImpl.class);
    worker.registerActivitiesImplementations(activities);
  }

  /**
   * Worker sizing, chosen together with the pool: at most {@code activitySlots} activities run at
   * once (0: twice the pool, since channel calls hold no connection), so the pool is never asked
   * for much more than it has; the pool's connection timeout ends a wait before the activity
   * timeout, and the attempt is retried with backoff.
   */
  public static io.temporal.worker.WorkerOptions workerOptions(int maxPoolSize, FlashsaleConfiguration.TemporalSettings t) {
    int slots = t.activitySlots > 0 ? t.activitySlots : 2 * maxPoolSize;
    return io.temporal.worker.WorkerOptions.newBuilder()
        .setMaxConcurrentActivityExecutionSize(slots)
        // local database steps share the pool with the activity tasks: the same bound
        .setMaxConcurrentLocalActivityExecutionSize(slots)
        .setMaxConcurrentActivityTaskPollers(Math.max(1, Math.min(t.activityPollers, slots)))
        .setMaxConcurrentWorkflowTaskPollers(Math.max(2, t.workflowPollers))
        .build();
  }

  /** The custom search attributes the workflows set, all Keyword. */
  public static final java.util.List<String> SEARCH_ATTRIBUTES = java.util.List.of(
      OrderWorkflow.ORDER_ID.getName(), OrderWorkflow.ORDER_STATUS.getName(),
      OrderWorkflow.SKU.getName(), OrderWorkflow.TENANT.getName(), OrderWorkflow.ORDER_ATTENTION.getName(),
      io.flashsale.workflows.ReconcileWorkflow.OUTCOME.getName());

  /**
   * Registers the custom search attributes the workflow upserts, on any engine that lacks them.
   * An unregistered one fails the workflow task in a loop, so this runs before any worker starts;
   * when the engine does not let us add them, the service stops with the command that does.
   */
  public void ensureSearchAttributes(String namespace, boolean inMemoryEngine) {
    // its own channel with the same target, TLS and API key as the workflow service
    OperatorServiceStubs operator = OperatorServiceStubs.newServiceStubs(
        OperatorServiceStubsOptions.newBuilder(service.getOptions()).validateAndBuildWithDefaults());
    try {
      java.util.Set<String> missing = inMemoryEngine ? new java.util.TreeSet<>(SEARCH_ATTRIBUTES)
          : missingSearchAttributes(operator, namespace);
      if (missing.isEmpty()) return;
      Map<String, IndexedValueType> add = new java.util.LinkedHashMap<>();
      for (String name : missing) add.put(name, IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD);
      try {
        operator.blockingStub().addSearchAttributes(AddSearchAttributesRequest.newBuilder()
            .setNamespace(namespace).putAllSearchAttributes(add).build());
        log.info("search attributes {} registered in namespace {}", missing, namespace);
      } catch (io.grpc.StatusRuntimeException e) {
        if (inMemoryEngine || e.getStatus().getCode() == io.grpc.Status.Code.ALREADY_EXISTS) return;
        StringBuilder cmd = new StringBuilder("temporal operator search-attribute create --namespace ").append(namespace);
        for (String name : missing) cmd.append(" --name ").append(name).append(" --type Keyword");
        throw new IllegalStateException("the search attributes " + missing + " are not registered in namespace "
            + namespace + " and this service may not add them (" + e.getStatus().getCode() + "). Register them once: "
            + cmd, e);
      }
    } finally {
      operator.shutdown();
    }
  }

  /**
   * From the operator API; where the service may not use it (e.g. a cloud namespace's API key),
   * by asking visibility about each attribute: an unknown one is an invalid query.
   */
  private java.util.Set<String> missingSearchAttributes(OperatorServiceStubs operator, String namespace) {
    java.util.Set<String> missing = new java.util.TreeSet<>(SEARCH_ATTRIBUTES);
    try {
      missing.removeAll(operator.blockingStub().listSearchAttributes(
          io.temporal.api.operatorservice.v1.ListSearchAttributesRequest.newBuilder().setNamespace(namespace).build())
          .getCustomAttributesMap().keySet());
      return missing;
    } catch (io.grpc.StatusRuntimeException e) {
      log.warn("could not list search attributes ({}); asking visibility instead", e.getStatus().getCode());
    }
    for (String name : SEARCH_ATTRIBUTES) {
      try {
        service.blockingStub().countWorkflowExecutions(
            io.temporal.api.workflowservice.v1.CountWorkflowExecutionsRequest.newBuilder().setNamespace(namespace)
                .setQuery(name + " = 'probe'").build());
        missing.remove(name);
      } catch (io.grpc.StatusRuntimeException e) {
        if (e.getStatus().getCode() != io.grpc.Status.Code.INVALID_ARGUMENT) missing.remove(name); // cannot tell
      }
    }
    return missing;
  }

  @Override
  public void start() {
    workers.start();
  }

  /**
   * Stops polling, lets the workflow and activity tasks already taken finish (up to 10 s) and
   * report their results, then closes the connection.
   */
  @Override
  public void stop() {
    workers.shutdown();
    workers.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
    if (!workers.isTerminated()) log.warn("the worker still runs tasks after 10 s; closing the connection anyway");
    service.shutdown();
    try {
      service.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
    } catch (RuntimeException e) {
      log.warn("the Temporal connection did not close: {}", e.toString());
    }
  }

  /** True once the worker stopped and every task it had taken finished. */
  public boolean workerTerminated() {
    return workers.isTerminated();
  }

  /** True once the connection to the Temporal frontend is closed. */
  public boolean connectionClosed() {
    return service.isTerminated();
  }
}
