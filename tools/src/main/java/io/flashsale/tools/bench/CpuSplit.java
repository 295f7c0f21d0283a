package io.flashsale.tools.bench;

/**
 * Who used the machine during a scenario: the client (the load JVM) and the service (the service
 * JVM, PostgreSQL, the Temporal dev server), in CPU-seconds and as shares of cores × wall time.
 */
public record CpuSplit(double wallSeconds, double clientSeconds, double serviceSeconds, int cores) {

  /** CPU counters at one instant; all in nanoseconds. */
  public record Sample(long wallNanos, long serviceNanos, long clientNanos) {}

  public static CpuSplit between(Sample start, Sample end, int cores) {
    return new CpuSplit((end.wallNanos() - start.wallNanos()) / 1e9, (end.clientNanos() - start.clientNanos()) / 1e9,
        (end.serviceNanos() - start.serviceNanos()) / 1e9, cores);
  }

  /** The client's part of the machine's capacity over the window (1.0 = every core all the time). */
  public double clientShare() {
    return share(clientSeconds);
  }

  public double serviceShare() {
    return share(serviceSeconds);
  }

  /** What neither used: idle, or other programs on the machine. */
  public double idleShare() {
    return 1 - clientShare() - serviceShare();
  }

  private double share(double cpuSeconds) {
    return wallSeconds <= 0 ? Double.NaN : cpuSeconds / (cores * wallSeconds);
  }

  public String line() {
    return String.format("cpu over %.1f s on %d cores: client %.1f s (%.0f%%), service %.1f s (%.0f%%), rest %.0f%%",
        wallSeconds, cores, clientSeconds, 100 * clientShare(), serviceSeconds, 100 * serviceShare(),
        100 * idleShare());
  }
}
