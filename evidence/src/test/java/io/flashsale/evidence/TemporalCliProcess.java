package io.flashsale.evidence;

import io.flashsale.devstack.TemporalCli;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The real {@code temporal} CLI binary, run as an operator would against the stack's engine. */
final class TemporalCliProcess {
  record Result(int exit, String output) {}

  private TemporalCliProcess() {}

  /** The installed binary; a missing one fails the experiment (it never skips). */
  static Path binary() {
    return TemporalCli.find("").orElseThrow(() -> new AssertionError(
        "no temporal CLI: run " + TemporalCli.INSTALL_HINT + " (./flashsale test does it)"));
  }

  static Result run(Stack stack, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of(binary().toString()));
    cmd.addAll(List.of(args));
    cmd.addAll(List.of("--address", "127.0.0.1:" + stack.temporalPort, "--namespace", "default"));
    // output to a file: a large history must not fill a pipe nobody reads yet
    Path out = java.nio.file.Files.createTempFile("temporal-cli-", ".out");
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("temporal " + String.join(" ", args) + " did not finish within 60 s");
      }
      return new Result(p.exitValue(), java.nio.file.Files.readString(out, StandardCharsets.UTF_8).trim());
    } finally {
      java.nio.file.Files.deleteIfExists(out);
    }
  }
}
