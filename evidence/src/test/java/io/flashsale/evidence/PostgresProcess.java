package io.flashsale.evidence;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The stack's PostgreSQL as an operating-system process: its postmaster is SIGKILLed and started
 * again on the same data directory and port, the way an operator (or a supervisor) would restart a
 * crashed server. The restart runs {@code pg_ctl} from the binaries zonky extracted (as zonky does), with the
 * postmaster's own options (read from /proc before the kill); the stack's stop later shuts it down
 * with {@code pg_ctl stop} on the same data directory, as it would the first one.
 */
final class PostgresProcess {
  private final Path dataDir;
  private final Path bin;
  private final List<String> options;

  private PostgresProcess(Path dataDir, Path bin, List<String> options) {
    this.dataDir = dataDir;
    this.bin = bin;
    this.options = options;
  }

  /** The running postmaster of the stack: its pid is the first line of postmaster.pid. */
  static PostgresProcess of(Stack stack) throws IOException {
    Path dataDir = stack.wiring.stack().postgresDir().toPath();
    long pid = postmasterPid(dataDir);
    // /proc/<pid>/cmdline: the postgres binary, -D <dir>, then the options zonky gave it
    byte[] raw = Files.readAllBytes(Path.of("/proc", String.valueOf(pid), "cmdline"));
    List<String> argv = new ArrayList<>(Arrays.asList(new String(raw, StandardCharsets.UTF_8).split("\0")));
    Path bin = Path.of(argv.get(0)).getParent();
    int d = argv.indexOf("-D");
    List<String> options = new ArrayList<>(argv.subList(1, argv.size()));
    if (d > 0) options = new ArrayList<>(argv.subList(d + 2, argv.size()));
    return new PostgresProcess(dataDir, bin, options);
  }

  static long postmasterPid(Path dataDir) throws IOException {
    return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
  }

  long pid() throws IOException {
    return postmasterPid(dataDir);
  }

  /** The postmaster's options besides its data directory, e.g. -p PORT -F -c synchronous_commit=on. */
  List<String> options() {
    return options;
  }

  /**
   * SIGKILL of the postmaster only, as the kernel's OOM killer would do it; its backends and helper
   * processes notice that it died and exit by themselves. Returns when all of them are gone (a new
   * postmaster refuses the data directory while one of them still holds the shared memory).
   */
  long killPostmaster(long timeoutMs) throws IOException, InterruptedException {
    long pid = pid();
    ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow(() -> new IOException("no postmaster " + pid));
    List<ProcessHandle> children = postmaster.children().toList();
    int exit = new ProcessBuilder("kill", "-KILL", String.valueOf(pid)).inheritIO().start().waitFor();
    if (exit != 0) throw new IOException("kill -KILL " + pid + " exited " + exit);
    long deadline = System.currentTimeMillis() + timeoutMs;
    while (System.currentTimeMillis() < deadline
        && (postmaster.isAlive() || children.stream().anyMatch(ProcessHandle::isAlive))) {
      Thread.sleep(20);
    }
    if (postmaster.isAlive() || children.stream().anyMatch(ProcessHandle::isAlive)) {
      throw new IOException("the killed postmaster's processes did not exit within " + timeoutMs + " ms");
    }
    return pid;
  }

  /**
   * Starts PostgreSQL again on the same data directory and options (so the same port): crash
   * recovery replays the WAL first. Returns the new postmaster's pid once it accepts connections.
   */
  long restart(long timeoutMs) throws IOException, InterruptedException {
    Path log = dataDir.resolveSibling("postgres-restart.log");
    List<String> cmd = new ArrayList<>();
    // pg_ctl refuses to run as root; zonky starts it in a user namespace (unshare -U) then, so do the same
    if ("root".equals(System.getProperty("user.name"))) cmd.addAll(List.of("unshare", "-U"));
    cmd.addAll(List.of(bin.resolve("pg_ctl").toString(), "-D", dataDir.toString(), "-l", log.toString(),
        "-w", "-t", String.valueOf(Math.max(1, timeoutMs / 1000)), "-o", io.flashsale.devstack.SupervisedPostgres.shellWords(options), "start"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dataDir.resolveSibling("pg_ctl-restart.out").toFile()).start();
    if (!p.waitFor(timeoutMs + 5_000, java.util.concurrent.TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new IOException("pg_ctl start did not return within " + timeoutMs + " ms, see " + log);
    }
    if (p.exitValue() != 0) {
      throw new IOException("pg_ctl start exited " + p.exitValue() + ": "
          + Files.readString(dataDir.resolveSibling("pg_ctl-restart.out")) + " (log " + log + ")");
    }
    return pid();
  }
}
