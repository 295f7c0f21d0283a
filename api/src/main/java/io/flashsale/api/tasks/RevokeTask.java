package io.flashsale.api.tasks;

import io.flashsale.persistence.Principals;

/**
 * POST /tasks/revoke?tenant=&subject= : every later call of that principal is 403, its open event
 * streams end, and every token issued until now stays refused after an unrevoke.
 */
public class RevokeTask extends PrincipalTask {
  public RevokeTask(Principals principals) {
    super("revoke", principals);
  }

  @Override
  protected void apply(String tenant, String subject) {
    principals.revoke(tenant, subject);
  }
}
