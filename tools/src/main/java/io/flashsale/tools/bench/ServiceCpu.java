package io.flashsale.tools.bench;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Samples the CPU counters of the service (this JVM, every process it started — the Temporal dev
 * server — and PostgreSQL's postmaster with its backends, which zonky may have left outside our
 * process tree) and of one client process (the load JVM, with the pgbench it ran). On the
 * production shape's engine the Temporal server's own PostgreSQL is a part of its own.
 */
public final class ServiceCpu {
  private final com.sun.management.OperatingSystemMXBean os =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  /** Processes of the service that are not descendants of this JVM (the postmaster), looked up at each sample. */
  private final Supplier<List<ProcessHandle>> extraRoots;
  /** The Temporal server's PostgreSQL (postmaster), counted as {@link CpuSplit#TEMPORAL_POSTGRES}; none on other engines. */
  private final Supplier<List<ProcessHandle>> engineDatabaseRoots;

  public ServiceCpu(Supplier<List<ProcessHandle>> extraRoots) {
    this(extraRoots, List::of);
  }

  public ServiceCpu(Supplier<List<ProcessHandle>> extraRoots, Supplier<List<ProcessHandle>> engineDatabaseRoots) {
    this.extraRoots = extraRoots;
    this.engineDatabaseRoots = engineDatabaseRoots;
  }

  /** The service's CPU by part (this JVM, Temporal, PostgreSQL, anything else), and the client's (null: none). */
  public CpuSplit.Sample sample(ProcessHandle client) {
    long wall = System.nanoTime();
    java.util.Map<String, Long> parts = new java.util.LinkedHashMap<>();
    // this JVM's own threads; its reaped children are not service work
    parts.put(CpuSplit.JVM, os.getProcessCpuTime());
    serviceProcesses(client).forEach((p, part) -> parts.merge(part, ProcStat.cpuNanos(p.pid()).orElse(0), Long::sum));
    long clientCpu = 0; // null: no client, the service alone
    if (client != null) {
      clientCpu = ProcStat.cpuNanos(client.pid()).orElse(0);
      for (ProcessHandle p : client.descendants().toList()) clientCpu += ProcStat.cpuNanos(p.pid()).orElse(0);
    }
    return new CpuSplit.Sample(wall, parts, clientCpu);
  }

  static String part(String command) {
    String name = command.substring(command.lastIndexOf('/') + 1);
    if (name.startsWith("postgres") || name.startsWith("pg_ctl")) return CpuSplit.POSTGRES;
    if (name.startsWith("temporal")) return CpuSplit.TEMPORAL;
    return CpuSplit.OTHER;
  }

  /**
   * The service's processes besides this JVM, each with its part, from one walk of each tree: the
   * engine's database (its backends are named postgres too), then the orders' PostgreSQL, then
   * this JVM's descendants by name; the client and its descendants excluded.
   */
  private java.util.Map<ProcessHandle, String> serviceProcesses(ProcessHandle client) {
    Set<Long> clientSide = new LinkedHashSet<>();
    if (client != null) {
      clientSide.add(client.pid());
      client.descendants().forEach(p -> clientSide.add(p.pid()));
    }
    clientSide.add(ProcessHandle.current().pid());
    java.util.Map<Long, ProcessHandle> byPid = new java.util.HashMap<>();
    java.util.Map<ProcessHandle, String> out = new java.util.LinkedHashMap<>();
    java.util.function.BiConsumer<ProcessHandle, String> add = (p, part) -> {
      if (!clientSide.contains(p.pid()) && byPid.putIfAbsent(p.pid(), p) == null) out.put(p, part);
    };
    for (ProcessHandle r : engineDatabaseRoots.get()) {
      add.accept(r, CpuSplit.TEMPORAL_POSTGRES);
      r.descendants().forEach(d -> add.accept(d, CpuSplit.TEMPORAL_POSTGRES));
    }
    for (ProcessHandle r : extraRoots.get()) {
      add.accept(r, CpuSplit.POSTGRES);
      r.descendants().forEach(d -> add.accept(d, CpuSplit.POSTGRES));
    }
    ProcessHandle.current().descendants().forEach(p -> add.accept(p, part(p.info().command().orElse(""))));
    return out;
  }

  /** "java + 1 temporal + 9 postgres": what the service's CPU is summed over. */
  public String describe() {
    java.util.Map<String, Integer> byName = new java.util.TreeMap<>();
    for (ProcessHandle p : serviceProcesses(null).keySet()) {
      String cmd = p.info().command().orElse("?");
      byName.merge(cmd.substring(cmd.lastIndexOf('/') + 1), 1, Integer::sum);
    }
    StringBuilder sb = new StringBuilder("this JVM");
    byName.forEach((k, v) -> sb.append(" + ").append(v).append(' ').append(k));
    return sb.toString();
  }
}
