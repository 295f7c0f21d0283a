package io.flashsale.workflows;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;

/** The warm-up run's local activity: it answers its argument and does nothing else. */
@ActivityInterface
public interface WarmUpActivities {
  @ActivityMethod(name = "WarmUpEcho")
  String echo(String token);

  /** The only implementation. */
  final class Echo implements WarmUpActivities {
    @Override
    public String echo(String token) {
      return token;
    }
  }
}
