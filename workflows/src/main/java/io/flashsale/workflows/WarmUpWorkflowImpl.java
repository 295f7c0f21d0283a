package io.flashsale.workflows;

import io.temporal.activity.LocalActivityOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;

/** See {@link WarmUpWorkflow}: the update's handler runs the echo as a local activity, then the run ends. */
public final class WarmUpWorkflowImpl implements WarmUpWorkflow {
  private final WarmUpActivities echo = Workflow.newLocalActivityStub(WarmUpActivities.class,
      LocalActivityOptions.newBuilder().setStartToCloseTimeout(Duration.ofSeconds(5)).build());
  private boolean answered;

  @Override
  public void run() {
    Workflow.await(() -> answered);
  }

  @Override
  public String touch(String token) {
    String echoed = echo.echo(token);
    answered = true;
    return echoed;
  }
}
