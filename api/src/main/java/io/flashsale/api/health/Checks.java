package io.flashsale.api.health;

import com.codahale.metrics.health.HealthCheck;
import io.flashsale.paymentchannel.PaymentChannel;
import io.flashsale.persistence.Database;
import io.flashsale.persistence.MemoryView;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;

/** Health checks for the three things an order needs (PostgreSQL, Temporal, the channel) and the stock view's age. */
public final class Checks {
  private Checks() {}

  public static HealthCheck postgres(Database db) {
    return new HealthCheck() {
      @Override
      protected Result check() {
        return db.ping() ? Result.healthy() : Result.unhealthy("SELECT 1 answered something else");
      }
    };
  }

  /**
   * An in-memory view's age (the sold-out view, the caller view): informational, never unhealthy.
   * A stale view costs database reads per create (the gate falls through to the database), not
   * correctness.
   */
  public static HealthCheck view(MemoryView view) {
    return new HealthCheck() {
      @Override
      protected Result check() {
        ResultBuilder b = Result.builder().healthy().withMessage(view.describe())
            .withDetail("ageMs", view.ageMillis())
            .withDetail("boundMs", view.boundMillis())
            .withDetail("fresh", view.fresh());
        view.details().forEach(b::withDetail);
        return b.build();
      }
    };
  }

  public static HealthCheck temporal(WorkflowServiceStubs service) {
    return new HealthCheck() {
      @Override
      protected Result check() {
        service.blockingStub().getSystemInfo(GetSystemInfoRequest.getDefaultInstance());
        return Result.healthy();
      }
    };
  }

  public static HealthCheck channel(PaymentChannel channel) {
    return new HealthCheck() {
      @Override
      protected Result check() {
        return channel.reachable() ? Result.healthy() : Result.unhealthy("channel " + channel.describe() + " unreachable");
      }
    };
  }
}
