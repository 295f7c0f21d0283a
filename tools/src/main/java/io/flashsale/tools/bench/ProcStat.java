package io.flashsale.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * CPU time of a Linux process from /proc/&lt;pid&gt;/stat: its own (utime + stime) and that of the
 * children it has reaped (cutime + cstime), so the work of exited PostgreSQL backends or of a
 * finished pgbench is still counted once, in their parent.
 */
public final class ProcStat {
  /** USER_HZ: the unit of the stat file's times, 100 on every Linux this runs on. */
  static final long TICKS_PER_SECOND = 100;

  private ProcStat() {}

  /** CPU nanoseconds of the process and its reaped children, from one stat line. */
  public static long cpuNanos(String statLine, long ticksPerSecond) {
    // the command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'
    String[] f = statLine.substring(statLine.lastIndexOf(')') + 2).trim().split("\\s+");
    // after the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17); f[0] is field 3
    long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
    return ticks * 1_000_000_000L / ticksPerSecond;
  }

  /** The process's CPU (with its reaped children), or empty when it is gone or there is no /proc. */
  public static OptionalLong cpuNanos(long pid) {
    try {
      return OptionalLong.of(cpuNanos(Files.readString(Path.of("/proc", String.valueOf(pid), "stat")), TICKS_PER_SECOND));
    } catch (IOException | RuntimeException gone) {
      return OptionalLong.empty();
    }
  }
}
