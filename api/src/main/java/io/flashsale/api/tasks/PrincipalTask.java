package io.flashsale.api.tasks;

import io.flashsale.api.auth.TokenService;
import io.flashsale.persistence.Principals;
import java.io.PrintWriter;
import java.util.Set;

/** A task on one principal, named by {@code tenant} and {@code subject} (both in the token's name pattern). */
abstract class PrincipalTask extends AdminTask {
  protected final Principals principals;

  PrincipalTask(String name, Principals principals) {
    super(name, Set.of("tenant", "subject"));
    this.principals = principals;
  }

  @Override
  protected final void run(TaskParams params, PrintWriter out) {
    String tenant = params.name("tenant", TokenService.NAME);
    String subject = params.name("subject", TokenService.NAME);
    apply(tenant, subject);
    out.println(getName() + "d " + tenant + "/" + subject);
  }

  protected abstract void apply(String tenant, String subject);
}
