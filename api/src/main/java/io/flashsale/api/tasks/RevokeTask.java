package io.flashsale.api.tasks;

import io.flashsale.persistence.Principals;
import io.flashsale.api.auth.TokenService;
import java.io.PrintWriter;
import java.util.Set;

/** POST /tasks/revoke?tenant=&subject= : every later call of that principal is 403. */
public class RevokeTask extends AdminTask {
  private final Principals principals;

  public RevokeTask(Principals principals) {
    super("revoke", Set.of("tenant", "subject"));
    this.principals = principals;
  }

  @Override
  protected void run(TaskParams params, PrintWriter out) {
    String tenant = params.name("tenant", TokenService.NAME);
    String subject = params.name("subject", TokenService.NAME);
    principals.revoke(tenant, subject);
    out.println("revoked " + tenant + "/" + subject);
  }
}
