package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.FlashsaleApplication;
import java.util.Arrays;

/**
 * The entry point of a negative control's child JVM: the flashsale command line with one
 * safeguard switched off in code, as no configuration can. Arguments: the safeguard's name, then
 * the command (e.g. {@code PAID_EVENT_IN_SAME_TX worker embedded.yml}). Test classpath only.
 */
public final class WorkerWithoutSafeguard {
  private WorkerWithoutSafeguard() {}

  public static void main(String[] args) throws Exception {
    Safeguards safeguards = new Safeguards();
    Safeguards.Safeguard off = Safeguards.Safeguard.valueOf(args[0]);
    safeguards.switchOff(off);
    System.out.println("safeguard " + off + " switched off in this process (negative control)");
    new FlashsaleApplication(safeguards).run(Arrays.copyOfRange(args, 1, args.length));
  }
}
