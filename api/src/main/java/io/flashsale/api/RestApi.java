package io.flashsale.api;

import com.codahale.metrics.Gauge;
import io.dropwizard.auth.AuthDynamicFeature;
import io.dropwizard.auth.AuthValueFactoryProvider;
import io.dropwizard.core.setup.Environment;
import io.flashsale.api.auth.Caller;
import io.flashsale.api.auth.JsonUnauthorizedHandler;
import io.flashsale.api.auth.SessionAuthFilter;
import io.flashsale.api.auth.TokenAuthenticator;
import io.flashsale.api.auth.TokenService;
import io.flashsale.api.core.BodyLimit;
import io.flashsale.api.core.ErrorMappers;
import io.flashsale.api.core.ExactHeaders;
import io.flashsale.api.core.JsonErrorHandler;
import io.flashsale.api.core.StrictJson;
import io.flashsale.api.core.UndeclaredMethodFilter;
import io.flashsale.api.health.Checks;
import io.flashsale.api.observe.OrderMdc;
import io.flashsale.api.resources.CallbackResource;
import io.flashsale.api.resources.CreateAdmission;
import io.flashsale.api.resources.LogoutResource;
import io.flashsale.api.resources.OpenApiResource;
import io.flashsale.api.resources.OrderEventsResource;
import io.flashsale.api.resources.OrderResource;
import io.flashsale.api.resources.SessionResource;
import io.flashsale.api.tasks.AdminGuard;
import io.flashsale.api.tasks.ReconcileTask;
import io.flashsale.api.tasks.RetireTokenKeyTask;
import io.flashsale.api.tasks.RevokeTask;
import io.flashsale.api.tasks.SkuTask;
import io.flashsale.api.tasks.TaskErrors;
import io.flashsale.api.tasks.UnrevokeTask;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.Notifications;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.persistence.PayAnswers;
import io.flashsale.persistence.PrincipalView;
import io.flashsale.persistence.Principals;
import io.flashsale.persistence.Skus;
import io.flashsale.persistence.StockView;
import io.flashsale.reconciliation.OrphanRepair;
import io.flashsale.reconciliation.Reconciler;
import io.flashsale.reconciliation.WorkflowAudit;
import io.flashsale.workflows.Orders;
import io.temporal.serviceclient.WorkflowServiceStubs;
import jakarta.servlet.DispatcherType;
import java.util.EnumSet;
import java.util.List;
import org.glassfish.jersey.server.ServerProperties;

/**
 * The REST service put onto a Dropwizard environment: filters, error mappers, resources, admin
 * tasks, health checks. The launcher builds what it needs and calls {@link #register} once.
 */
public final class RestApi {

  /**
   * The API's limits and switches: the config keys of the same names, the sizes in bytes and the
   * durations in milliseconds (maxBodySize, createLatencyBudget, maxEventStreamDuration,
   * eventStreamHeartbeat); {@code rateLimits} null: no per-principal rates (rateLimits.enabled: false).
   */
  public record Settings(long maxBodyBytes, int maxCreatesInFlight, int minCreatesInFlight, long createLatencyBudgetMs,
      int maxCreatesInFlightPerPrincipal,
      int maxExports, int maxExportsPerPrincipal, int maxEventStreams, int maxEventStreamsPerPrincipal,
      long maxEventStreamMs, long eventStreamHeartbeatMs, boolean devLogin,
      Boolean secureCookie, boolean localDefault, String adminToken, Rates rateLimits) {}

  /** Per-principal request rates: writes and reads per second, each with its burst. */
  public record Rates(double writesPerSecond, int writeBurst, double readsPerSecond, int readBurst) {}

  /**
   * What the API talks to. {@code stockView} (started and stopped by the launcher) answers the
   * sold-out gate without a stock read; null: every create reads the stock. {@code principalView}
   * (likewise) answers the revocation check and, for a buyer without any order, the key check;
   * null: both read the database. {@code copiesAnsweredAtArrival}: whether a copy of a success
   * the order already applied is answered at arrival (false only while a negative control has the
   * status rule it stands for switched off). {@code channels}: the payment channels by id, each with
   * its callback format (its secrets with it).
   */
  public record Services(Database db, Orders orders, TokenService tokens, PaymentChannels channels,
      WorkflowServiceStubs temporal, Reconciler reconciler, WorkflowAudit audit, OrphanRepair repair,
      StockView stockView, PrincipalView principalView, java.util.function.BooleanSupplier copiesAnsweredAtArrival) {}

  private RestApi() {}

  public static void register(Environment env, Settings s, Services d) {
    OrderQueries queries = new OrderQueries(d.db());
    Principals principals = new Principals(d.db(), d.principalView());
    Skus skus = new Skus(d.db());

    // a header value is read as sent, never as a cached one of another case (tokens are case-sensitive)
    ExactHeaders.install(env);
    // stream as written (SSE, CSV): no buffering of the first 8 KiB to compute a Content-Length
    env.jersey().property(ServerProperties.OUTBOUND_CONTENT_LENGTH_BUFFER, 0);
    TokenAuthenticator authenticator = new TokenAuthenticator(d.tokens(), principals);
    env.jersey().register(new AuthDynamicFeature(new SessionAuthFilter.Builder(d.tokens())
        .setAuthenticator(authenticator)
        .setPrefix("Bearer")
        .setUnauthorizedHandler(new JsonUnauthorizedHandler())
        .buildAuthFilter()));
    env.jersey().register(new AuthValueFactoryProvider.Binder<>(Caller.class));
    env.jersey().register(new BodyLimit(s.maxBodyBytes()));
    if (s.rateLimits() != null) {
      Rates r = s.rateLimits();
      env.jersey().register(new io.flashsale.api.resources.RateLimits(r.writesPerSecond(), r.writeBurst(),
          r.readsPerSecond(), r.readBurst()));
    }
    env.jersey().register(new StrictJson());
    env.jersey().register(new io.flashsale.api.core.NoStore());
    env.jersey().register(new OrderMdc.JerseyFilter());
    env.servlets().addFilter("order-mdc", new OrderMdc.ClearFilter()).addMappingForUrlPatterns(null, false, "/*");
    env.jersey().register(new ErrorMappers.MalformedJson());
    env.jersey().register(new ErrorMappers.WebErrors());
    env.jersey().register(new ErrorMappers.DatabaseUnavailable());
    env.jersey().register(new ErrorMappers.Unexpected());

    if (s.devLogin()) env.jersey().register(new SessionResource(d.tokens(), principals, s.secureCookie()));
    env.jersey().register(new LogoutResource(principals, s.secureCookie()));
    OrderResource orderResource = new OrderResource(d.orders(), queries, skus, d.stockView(), d.principalView(),
        new CreateAdmission(s.minCreatesInFlight(), s.maxCreatesInFlight(), s.createLatencyBudgetMs(),
            s.maxCreatesInFlightPerPrincipal()), s.maxExports(),
        s.maxExportsPerPrincipal(), new PayAnswers(d.db()));
    env.jersey().register(orderResource);
    OrderEventsResource eventsResource = new OrderEventsResource(queries, authenticator, s.maxEventStreams(),
        s.maxEventStreamsPerPrincipal(),
        s.maxEventStreamMs(), s.eventStreamHeartbeatMs());
    env.jersey().register(eventsResource);
    // at the start of the stop, before the drain waits for the requests in flight: open streams end
    env.lifecycle().addServerLifecycleListener(server -> server.addEventListener(
        new org.eclipse.jetty.util.component.LifeCycle.Listener() {
          @Override
          public void lifeCycleStopping(org.eclipse.jetty.util.component.LifeCycle event) {
            eventsResource.endStreams();
          }
        }));
    CallbackResource callbacks = new CallbackResource(new Notifications(d.db(), d.copiesAnsweredAtArrival()), queries, d.orders(), d.channels());
    env.jersey().register(callbacks);
    env.metrics().register("flashsale.callbacks.answeredAtArrival", callbacks.answeredAtArrival());
    env.jersey().register(new OpenApiResource());
    env.metrics().register("flashsale.sse.open", (Gauge<Integer>) () -> eventsResource.openStreams());
    env.metrics().register("flashsale.exports.open", (Gauge<Integer>) orderResource::openExports);
    env.metrics().register("flashsale.gate.soldOutFromView", orderResource.gateFromView());
    env.metrics().register("flashsale.gate.databaseReads", orderResource.gateFromDatabase());
    env.metrics().register("flashsale.gate.keyReads", orderResource.keyFromDatabase());
    orderResource.refused().forEach((outcome, count) -> {
      if (outcome != io.flashsale.domain.CreateOutcome.CREATED && outcome != io.flashsale.domain.CreateOutcome.REPLAY) {
        env.metrics().register("flashsale.create.refused." + outcome.name(), count);
      }
    });
    env.metrics().register("flashsale.gate.overloaded", orderResource.overloaded());
    env.metrics().register("flashsale.admission.bound", (com.codahale.metrics.Gauge<Integer>) orderResource.admission()::bound);
    env.metrics().register("flashsale.admission.inFlight",
        (com.codahale.metrics.Gauge<Integer>) orderResource.admission()::inFlight);
    if (d.stockView() != null) {
      StockView view = d.stockView();
      env.metrics().register("flashsale.stockView.ageMs", (Gauge<Long>) view::ageMillis);
      env.metrics().register("flashsale.stockView.skus", (Gauge<Integer>) view::size);
      env.metrics().register("flashsale.stockView.notifications", (Gauge<Long>) view::notificationsApplied);
      env.healthChecks().register("stock-view", Checks.view(view));
    }
    if (d.principalView() != null) {
      PrincipalView view = d.principalView();
      env.metrics().register("flashsale.principalView.ageMs", (Gauge<Long>) view::ageMillis);
      env.metrics().register("flashsale.principalView.buyers", (Gauge<Integer>) view::buyers);
      env.healthChecks().register("principal-view", Checks.view(view));
    }

    // errors answered before Jersey (bad path, undeclared method) are problem details with a stable code too
    JsonErrorHandler.install(env);
    env.servlets().addFilter("undeclared-methods", new UndeclaredMethodFilter(OpenApiResource.load()))
        .addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), true, "/*");

    // first on the admin port: the Host check (local default) or the credential, and the task header
    // the admin port's own errors (an unknown task, a wrong method) too
    env.getAdminContext().setErrorHandler(new JsonErrorHandler());
    env.admin().addFilter("admin-guard", new AdminGuard(s.localDefault(), s.adminToken())).addMappingForUrlPatterns(
        EnumSet.of(DispatcherType.REQUEST), false, "/*");
    env.admin().addTask(new SkuTask(skus));
    env.admin().addTask(new RevokeTask(principals));
    env.admin().addTask(new UnrevokeTask(principals));
    env.admin().addTask(new RetireTokenKeyTask(d.tokens()));
    env.admin().addTask(new ReconcileTask(d.reconciler(), d.audit(), d.repair()));
    // refused task calls answer a 4xx problem detail instead of the TaskServlet's 500 (see AdminTask)
    env.admin().addFilter("task-errors", new TaskErrors()).addMappingForUrlPatterns(
        EnumSet.of(DispatcherType.REQUEST), true, "/tasks/*");

    env.healthChecks().register("postgresql", Checks.postgres(d.db()));
    env.healthChecks().register("temporal", Checks.temporal(d.temporal()));
    env.healthChecks().register("channel", Checks.channel(d.channels().defaultChannel()));
    for (String id : d.channels().ids()) {
      if (!id.equals(d.channels().defaultId())) env.healthChecks().register("channel-" + id, Checks.channel(d.channels().get(id).channel()));
    }
  }
}
