package io.flashsale.devstack.replay;

import io.dropwizard.core.cli.Command;
import io.dropwizard.core.setup.Bootstrap;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import net.sourceforge.argparse4j.inf.Namespace;
import net.sourceforge.argparse4j.inf.Subparser;

/**
 * ./flashsale replay: the replay gate before a workflow deploy. Replays exported histories
 * (--dir) or the executions the engine lists (--target, --query), oldest first, against the
 * current OrderWorkflowImpl; exit 0 all replayed, 1 some failed (each named), 2 nothing could be
 * read, 3 more executions match than --limit (nothing replayed: the gate never checks a part).
 */
public class ReplayCommand extends Command {
  public static final int OK = 0;
  public static final int FAILED = 1;
  public static final int NOTHING_READ = 2;
  public static final int TOO_MANY = 3;

  public ReplayCommand() {
    super("replay", "replay workflow histories (a folder of exported JSON, or the executions Temporal lists)"
        + " against the current workflow code; exit 1 if any is nondeterministic");
  }

  @Override
  public void configure(Subparser subparser) {
    subparser.addArgument("--dir").help("folder of exported histories (*.json); without it the engine is asked");
    subparser.addArgument("--target").setDefault("127.0.0.1:7233").help("Temporal frontend host:port");
    subparser.addArgument("--namespace").setDefault("default");
    subparser.addArgument("--query").setDefault(ReplayGate.DEFAULT_QUERY).help("visibility query of the executions");
    subparser.addArgument("--limit").type(Integer.class).setDefault(ReplayGate.DEFAULT_LIMIT)
        .help("the most executions the query may match (all are replayed, oldest first); more fails the gate"
            + " (exit 3) with their count");
    subparser.addArgument("--payload-key").action(net.sourceforge.argparse4j.impl.Arguments.append())
        .metavar("ID=ENV_VAR")
        .help("encrypted payloads: a key id and the environment variable holding its 64 hex digits; repeat for"
            + " every key the histories were sealed with (the secret never goes on the command line)");
  }

  /**
   * The converter for {@code --payload-key id=ENV_VAR ...}: null without any, else the payload
   * codec with those keys (the first seals; replay only needs them to open).
   */
  static io.temporal.common.converter.DataConverter converter(java.util.List<String> specs,
      java.util.function.Function<String, String> env) {
    if (specs == null || specs.isEmpty()) return null;
    java.util.Map<String, String> keys = new java.util.LinkedHashMap<>();
    for (String spec : specs) {
      int eq = spec.indexOf('=');
      if (eq <= 0 || eq == spec.length() - 1) {
        throw new IllegalArgumentException("--payload-key takes ID=ENV_VAR, not " + spec);
      }
      String var = spec.substring(eq + 1);
      String value = env.apply(var);
      if (value == null || value.isBlank()) {
        throw new IllegalArgumentException("--payload-key " + spec + ": the environment variable " + var + " is not set");
      }
      keys.put(spec.substring(0, eq), value);
    }
    return io.flashsale.workflows.codec.PayloadEncryption.fromHex(keys, keys.keySet().iterator().next()).dataConverter();
  }

  @Override
  public void run(Bootstrap<?> bootstrap, Namespace ns) {
    io.temporal.common.converter.DataConverter converter;
    try {
      converter = converter(ns.getList("payload_key"), System::getenv);
    } catch (IllegalArgumentException e) {
      System.err.println("replay: " + e.getMessage());
      System.exit(NOTHING_READ);
      return;
    }
    int code = execute(new ReplayGate().decodingWith(converter), ns.getString("dir"), ns.getString("target"), ns.getString("namespace"),
        ns.getString("query"), ns.getInt("limit"), System.out, System.err);
    System.out.flush();
    System.err.flush();
    System.exit(code); // also 0: the replay environment's threads must not keep the JVM up
  }

  /** Everything but the exit: the process exit code (0, 1, 2). */
  public static int execute(ReplayGate gate, String dir, String target, String namespace, String query, int limit,
      PrintStream out, PrintStream err) {
    ReplayGate.Report report;
    try {
      if (dir != null) {
        report = gate.replayDirectory(Path.of(dir));
      } else {
        report = fromEngine(gate, target, namespace, query, limit);
      }
    } catch (ReplayGate.TooManyRuns e) {
      err.println("replay: " + e.getMessage());
      return TOO_MANY;
    } catch (Exception e) {
      err.println("replay: nothing read from " + (dir != null ? dir : target + " (namespace " + namespace + ")")
          + ": " + e);
      return NOTHING_READ;
    }
    for (ReplayGate.Outcome o : report.outcomes()) out.println(o.line());
    out.println(report.summary());
    if (report.historiesRead() == 0) {
      err.println("replay: no history could be read from "
          + (dir != null ? dir : target + " (namespace " + namespace + ", query " + query + ")"));
      return NOTHING_READ;
    }
    if (!report.failures().isEmpty()) {
      err.println("replay: " + report.failures().size() + " failed: " + String.join(" ", report.failedNames()));
      return FAILED;
    }
    return OK;
  }

  private static ReplayGate.Report fromEngine(ReplayGate gate, String target, String namespace, String query,
      int limit) {
    WorkflowServiceStubs service =
        WorkflowServiceStubs.newServiceStubs(WorkflowServiceStubsOptions.newBuilder().setTarget(target).build());
    try {
      return gate.replayEngine(service, namespace, query, limit);
    } finally {
      service.shutdown();
      service.awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
