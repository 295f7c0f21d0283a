package io.flashsale.tools.bench;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The engine ceiling: N order-shaped workflows ({@link EngineCeiling}) by update-with-start at C
 * clients, straight to the engine the service uses: no HTTP, no database. Their worker is the
 * service JVM's. After the window every run is terminated, so no pending timer is left to fire in a
 * later scenario.
 */
final class EngineScenario {
  private final LoadContext ctx;

  EngineScenario(LoadContext ctx) {
    this.ctx = ctx;
  }

  ScenarioResult run(int run, int n, int clients, Duration max) throws Exception {
    Load.Endpoints at = ctx.at;
    if (at.temporal() == null || at.temporal().isBlank()) throw new IllegalArgumentException("engine needs --temporal");
    // a cluster behind mutual TLS: the certificates folder the service reads too (embedded.yml)
    io.flashsale.launcher.FlashsaleConfiguration.TlsSettings tls = new io.flashsale.launcher.FlashsaleConfiguration.TlsSettings();
    tls.certificateDir = java.util.Objects.requireNonNullElse(System.getenv("FLASHSALE_TEMPORAL_TLS_DIR"), "");
    WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
        io.flashsale.launcher.TemporalRuntime.stubsOptions(at.temporal(), tls.effective()).build());
    try {
      WorkflowClient client = WorkflowClient.newInstance(service,
          WorkflowClientOptions.newBuilder().setNamespace(at.namespace()).build());
      String sku = "bench-engine-" + run + "-" + ctx.tag;
      ctx.mark(Load.MARK_START);
      ExecutorService calls = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "engine-create");
        t.setDaemon(true);
        return t;
      });
      ClosedLoop.Batch b;
      try {
        b = ClosedLoop.run(clients, n, max, i -> ClosedLoop.timed(() -> {
          String id = sku + "-" + i;
          // bounded as a request is: without the ceiling's worker a create would wait forever
          Future<String> f = calls.submit(() -> EngineCeiling.create(client, id, LoadContext.TENANT, sku));
          try {
            return id.equals(f.get(Load.REQUEST_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) ? "CREATED" : "WRONG_ANSWER";
          } catch (TimeoutException e) {
            f.cancel(true);
            return ClosedLoop.CLIENT_TIMEOUT;
          } catch (ExecutionException e) {
            return ClosedLoop.failure(e.getCause());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ClosedLoop.CLIENT_TIMEOUT;
          }
        }));
      } finally {
        calls.shutdownNow();
      }
      ctx.mark(Load.MARK_END);
      List<Long> created = Stats.latencies(b.results(), "CREATED");
      List<String> broken = new ArrayList<>();
      long wrong = b.results().stream().filter(t -> t.outcome().equals("WRONG_ANSWER")).count();
      if (wrong > 0) broken.add(wrong + " creates answered another workflow's id");
      ClosedLoop.Batch ended = ClosedLoop.run(Math.min(clients, 16), n, Duration.ofMinutes(5),
          i -> ClosedLoop.timed(() -> {
            client.newUntypedWorkflowStub(sku + "-" + i).terminate("engine ceiling: measured");
            return "TERMINATED";
          }));
      long left = ended.results().stream().filter(t -> !t.outcome().equals("TERMINATED")).count();
      Map<String, Double> m = new LinkedHashMap<>();
      m.put("not terminated", (double) left); // a create that never started has nothing to end
      return LoadContext.result("engine", run, clients, b, created.size() / b.seconds(), "workflows/s", created, m,
          broken, List.of("update-with-start, one no-op local activity, 2 attributes upserted, a "
              + EngineCeiling.HOLD.toMinutes() + " min timer; worker in the service JVM"));
    } finally {
      service.shutdownNow();
    }
  }
}
