package io.flashsale.api.core;

import io.dropwizard.lifecycle.Managed;
import io.flashsale.workflows.ChannelActivities;
import io.flashsale.workflows.OrderActivities;
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
    this.service = WorkflowServiceStubs.newServiceStubs(WorkflowServiceStubsOptions.newBuilder().setTarget(target).build());
    this.client = WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace(namespace).build());
    WorkerFactoryOptions.Builder options = WorkerFactoryOptions.newBuilder();
    if (workflowCacheSize != null) options.setWorkflowCacheSize(workflowCacheSize);
    this.workers = WorkerFactory.newInstance(client, options.build());
  }

  public WorkflowClient client() {
    return client;
  }

  public WorkflowServiceStubs service() {
    return service;
  }

  /** A worker on the orders task queue hosting the workflows, the activities, or both. */
  public void registerWorker(OrderActivities orders, ChannelActivities channel, boolean workflows, boolean activities) {
    Worker worker = workers.newWorker(WorkflowIds.TASK_QUEUE);
    if (workflows) worker.registerWorkflowImplementationTypes(OrderWorkflowImpl.class);
    if (activities) worker.registerActivitiesImplementations(orders, channel);
  }

  /**
   * The custom search attributes the workflow upserts. An unregistered one fails the workflow
   * task in a loop, so the embedded service gets them before any worker starts.
   */
  public void registerSearchAttributes(String namespace) {
    OperatorServiceStubs operator = OperatorServiceStubs.newServiceStubs(
        OperatorServiceStubsOptions.newBuilder().setChannel(service.getRawChannel()).validateAndBuildWithDefaults());
    try {
      operator.blockingStub().addSearchAttributes(AddSearchAttributesRequest.newBuilder()
          .setNamespace(namespace)
          .putAllSearchAttributes(Map.of(
              OrderWorkflowImpl.ORDER_ID.getName(), IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
              OrderWorkflowImpl.ORDER_STATUS.getName(), IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
              OrderWorkflowImpl.SKU.getName(), IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
              OrderWorkflowImpl.TENANT.getName(), IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD))
          .build());
    } catch (io.grpc.StatusRuntimeException e) {
      log.info("search attributes not added ({}); assuming they exist", e.getStatus());
    }
  }

  @Override
  public void start() {
    workers.start();
  }

  @Override
  public void stop() {
    workers.shutdown();
    workers.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
    service.shutdown();
  }
}
