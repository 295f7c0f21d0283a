package io.flashsale.tools;

import io.flashsale.launcher.FlashsaleApplication;
import net.sourceforge.argparse4j.impl.Arguments;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/** ./flashsale demo: the server stack, a scripted sale against it, the result table. */
public class DemoCommand extends StackScriptCommand {

  public DemoCommand(FlashsaleApplication app) {
    super(app, "demo", "start the embedded stack, run a short scripted flash sale, print the result");
  }

  @Override
  public void configure(Subparser subparser) {
    super.configure(subparser);
    subparser.addArgument("--keep").action(Arguments.storeTrue())
        .help("keep the stack running after the demo (e.g. for ./flashsale reconcile)");
  }

  @Override
  protected boolean keepRunning(Namespace ns) {
    return Boolean.TRUE.equals(ns.getBoolean("keep"));
  }

  @Override
  protected int script(FlashsaleApplication.Wiring w, Namespace ns) throws Exception {
    boolean clean = new DemoScript("http://127.0.0.1:" + w.apiPort(), "http://127.0.0.1:" + w.adminPort(),
        w.channelUrl(), System.out).run();
    return clean ? 0 : 1;
  }
}
