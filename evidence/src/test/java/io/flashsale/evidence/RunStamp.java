package io.flashsale.evidence;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Which run and which code made an artefact: the run id (one per Maven invocation: the build's
 * start time, the system property {@code evidence.run}) and the commit with the state of the
 * tree outside the artefacts. Every result file, the schemathesis summary and the Web UI manifest
 * carry this line, so evidence/summary.sh can tell artefacts of one run from stale ones (see
 * DESIGN.md, Experiments).
 */
public record RunStamp(String run, String commit, boolean treeClean) {
  /** The artefacts a run writes into the tree: they do not count as a change of the code. */
  static final List<String> ARTEFACTS = List.of("evidence/output.txt", "evidence/schemathesis", "evidence/webui");

  /** This JVM's run: one git call per JVM. */
  public static final RunStamp CURRENT = of(System.getProperty("evidence.run", ""), Path.of(""));

  static RunStamp of(String run, Path dir) {
    String commit = git(dir, "rev-parse", "HEAD");
    List<String> status = new ArrayList<>(List.of("status", "--porcelain", "--", ":/"));
    for (String a : ARTEFACTS) status.add(":(top,exclude)" + a);
    String changes = commit == null ? null : git(dir, status.toArray(new String[0]));
    return new RunStamp(run.isBlank() ? "unstamped" : run, commit == null ? "unknown" : commit,
        changes != null && changes.isEmpty());
  }

  /** {@code RUN <id> commit=<sha> tree=clean|modified}: the line summary.sh reads. */
  public String line() {
    return "RUN " + run + " commit=" + commit + " tree=" + (treeClean ? "clean" : "modified");
  }

  /** The output of a git command in the folder, trimmed; null when git is missing or fails. */
  private static String git(Path dir, String... args) {
    List<String> cmd = new ArrayList<>(List.of("git", "-C", dir.toAbsolutePath().toString()));
    cmd.addAll(List.of(args));
    try {
      Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return null;
      }
      return p.exitValue() == 0 ? out : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
