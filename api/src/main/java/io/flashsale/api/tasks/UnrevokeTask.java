package io.flashsale.api.tasks;

import io.flashsale.persistence.Principals;
import io.flashsale.api.auth.TokenService;
import java.io.PrintWriter;
import java.util.Set;

/**
 * POST /tasks/unrevoke?tenant=&subject= : a revoked principal may call again (with any token it
 * still holds that has not expired). An unknown principal is 404 PRINCIPAL_NOT_FOUND.
 */
public class UnrevokeTask extends AdminTask {
  private final Principals principals;

  public UnrevokeTask(Principals principals) {
    super("unrevoke", Set.of("tenant", "subject"));
    this.principals = principals;
  }

  @Override
  protected void run(TaskParams params, PrintWriter out) {
    String tenant = params.name("tenant", TokenService.NAME);
    String subject = params.name("subject", TokenService.NAME);
    if (!principals.unrevoke(tenant, subject)) {
      throw new TaskError(404, "PRINCIPAL_NOT_FOUND", "subject", "no principal " + tenant + "/" + subject);
    }
    out.println("unrevoked " + tenant + "/" + subject);
  }
}
