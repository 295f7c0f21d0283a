package io.flashsale.api.tasks;

import io.dropwizard.servlets.tasks.Task;
import io.flashsale.activities.Principals;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/** POST /tasks/revoke?tenant=&subject= : every later call of that principal is 403. */
public class RevokeTask extends Task {
  private final Principals principals;

  public RevokeTask(Principals principals) {
    super("revoke");
    this.principals = principals;
  }

  @Override
  public void execute(Map<String, List<String>> params, PrintWriter out) {
    String tenant = SkuTask.one(params, "tenant", null);
    String subject = SkuTask.one(params, "subject", null);
    principals.revoke(tenant, subject);
    out.println("revoked " + tenant + "/" + subject);
  }
}
