package io.flashsale.api.tasks;

import io.flashsale.persistence.Principals;

/**
 * POST /tasks/unrevoke?tenant=&subject= : a revoked principal may call again, with a token issued
 * after the revocation (the ones issued before stay refused). An unknown principal is 404
 * PRINCIPAL_NOT_FOUND.
 */
public class UnrevokeTask extends PrincipalTask {
  public UnrevokeTask(Principals principals) {
    super("unrevoke", principals);
  }

  @Override
  protected void apply(String tenant, String subject) {
    if (!principals.unrevoke(tenant, subject)) {
      throw new TaskError(404, "PRINCIPAL_NOT_FOUND", "subject", "no principal " + tenant + "/" + subject);
    }
  }
}
