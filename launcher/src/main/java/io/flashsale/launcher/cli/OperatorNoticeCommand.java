package io.flashsale.launcher.cli;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.flashsale.domain.OperatorProof;
import java.util.LinkedHashMap;
import java.util.Map;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/**
 * ./flashsale operator-notice: the input of an operator's {@code paymentNotification} signal,
 * proved with the admin credential from FLASHSALE_ADMIN_TOKEN (docs/DESIGN.md §Trust boundaries),
 * for {@code temporal workflow signal --name paymentNotification --input "$(…)"}. A signal without
 * the proof is recorded as REJECTED and changes nothing.
 */
public class OperatorNoticeCommand extends Command {
  public static final String KEY_ENV = "FLASHSALE_ADMIN_TOKEN";

  public OperatorNoticeCommand() {
    super("operator-notice", "print a payment notice signed with the admin credential, for temporal workflow signal");
  }

  @Override
  public void configure(Subparser subparser) {
    subparser.addArgument("--order").required(true).help("the order id (ord-…)");
    subparser.addArgument("--notify-id").required(true).help("the notice's id, e.g. ops-1");
    subparser.addArgument("--kind").required(true).choices("CHARGED", "DECLINED", "REFUNDED");
    subparser.addArgument("--amount").type(Long.class).required(true).help("the amount in minor units, as charged");
    subparser.addArgument("--txn").help("the channel's transaction id");
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) throws Exception {
    String key = System.getenv(KEY_ENV);
    if (key == null || key.isBlank()) {
      throw new IllegalArgumentException(KEY_ENV + " is not set: an operator's notice is signed with the admin credential");
    }
    Map<String, Object> notice = new LinkedHashMap<>();
    notice.put("notify_id", ns.getString("notify_id"));
    notice.put("kind", ns.getString("kind"));
    notice.put("amount", ns.getLong("amount"));
    if (ns.getString("txn") != null) notice.put("txn", ns.getString("txn"));
    notice.put("operator_proof", OperatorProof.of(key, ns.getString("order"), ns.getString("notify_id"),
        ns.getString("kind"), ns.getLong("amount"), ns.getString("txn")));
    System.out.println(HttpJson.JSON.writeValueAsString(notice));
  }
}
