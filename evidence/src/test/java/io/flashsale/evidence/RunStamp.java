package io.flashsale.evidence;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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

  /**
   * Writes manifest.txt into an artefact folder: this run's line, the experiment that made the
   * files, and each file's SHA-256. evidence/summary.sh publishes the folder into the tree only
   * when the manifest names the run it summarises and every hash matches.
   */
  static void writeManifest(Path dir, String experiment, List<String> files) throws IOException {
    StringBuilder sb = new StringBuilder(CURRENT.line()).append('\n');
    sb.append("EXPERIMENT ").append(experiment).append(" [").append(Stack.ENGINE).append("]\n");
    for (String f : files) sb.append("FILE ").append(f).append(" sha256=").append(sha256(dir.resolve(f))).append('\n');
    Files.writeString(dir.resolve("manifest.txt"), sb.toString());
  }

  private static String sha256(Path file) throws IOException {
    try {
      return java.util.HexFormat.of().formatHex(
          java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Empties an artefact folder at the start of its experiment: nothing of an earlier run stays next to this one's. */
  static void emptyFolder(Path dir) throws IOException {
    Files.createDirectories(dir);
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        if (Files.isRegularFile(f)) Files.delete(f);
      }
    }
  }

  /**
   * A path as the record shows it: relative to the repository (the folder holding ./flashsale), so
   * the committed output does not carry one machine's checkout path.
   */
  static String shown(Path path) {
    Path abs = path.toAbsolutePath().normalize();
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("flashsale")) && abs.startsWith(dir)) return dir.relativize(abs).toString();
    }
    return abs.toString();
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
