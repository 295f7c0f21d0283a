package io.flashsale.api.tasks;

import io.flashsale.api.auth.TokenService;
import java.io.PrintWriter;
import java.util.Set;

/**
 * POST /tasks/retire-token-key?keyId= : a token key leaked; every token it signed is refused from
 * now on in this process, open event streams included, until the configuration without it is
 * deployed. 404 UNKNOWN_KEY for a key not configured (or already retired), 409 SIGNING_KEY for the
 * key that signs new tokens (configure another auth.signingKeyId first).
 */
public class RetireTokenKeyTask extends AdminTask {
  private final TokenService tokens;

  public RetireTokenKeyTask(TokenService tokens) {
    super("retire-token-key", Set.of("keyId"));
    this.tokens = tokens;
  }

  @Override
  protected void run(TaskParams params, PrintWriter out) {
    String keyId = params.name("keyId", TokenService.KEY_ID);
    boolean retired;
    try {
      retired = tokens.retire(keyId);
    } catch (IllegalArgumentException signing) {
      throw new TaskError(409, "SIGNING_KEY", "keyId", signing.getMessage());
    }
    if (!retired) throw new TaskError(404, "UNKNOWN_KEY", "keyId", "no token key '" + keyId + "' is configured");
    out.println("retired token key " + keyId);
  }
}
