package io.flashsale.tools.bench;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Samples the CPU counters of the service (this JVM, every process it started — the Temporal dev
 * server — and PostgreSQL's postmaster with its backends, which zonky may have left outside our
 * process tree) and of one client process (the load JVM, with the pgbench it ran).
 */
public final class ServiceCpu {
  private final com.sun.management.OperatingSystemMXBean os =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  /** Processes of the service that are not descendants of this JVM (the postmaster), looked up at each sample. */
  private final Supplier<List<ProcessHandle>> extraRoots;

  public ServiceCpu(Supplier<List<ProcessHandle>> extraRoots) {
    this.extraRoots = extraRoots;
  }

  public CpuSplit.Sample sample(ProcessHandle client) {
    long wall = System.nanoTime();
    long service = os.getProcessCpuTime(); // this JVM's own threads; its reaped children are not service work
    for (ProcessHandle p : serviceProcesses(client)) service += ProcStat.cpuNanos(p.pid()).orElse(0);
    long clientCpu = ProcStat.cpuNanos(client.pid()).orElse(0);
    for (ProcessHandle p : client.descendants().toList()) clientCpu += ProcStat.cpuNanos(p.pid()).orElse(0);
    return new CpuSplit.Sample(wall, service, clientCpu);
  }

  /** The service's processes besides this JVM; the client and its descendants excluded. */
  public List<ProcessHandle> serviceProcesses(ProcessHandle client) {
    Set<Long> clientSide = new LinkedHashSet<>();
    if (client != null) {
      clientSide.add(client.pid());
      client.descendants().forEach(p -> clientSide.add(p.pid()));
    }
    Set<Long> seen = new LinkedHashSet<>();
    List<ProcessHandle> out = new java.util.ArrayList<>();
    java.util.stream.Stream.concat(ProcessHandle.current().descendants(),
            extraRoots.get().stream().flatMap(r -> java.util.stream.Stream.concat(java.util.stream.Stream.of(r), r.descendants())))
        .filter(p -> !clientSide.contains(p.pid()) && p.pid() != ProcessHandle.current().pid())
        .filter(p -> seen.add(p.pid()))
        .forEach(out::add);
    return out;
  }

  /** "java + 1 temporal + 9 postgres": what the service's CPU is summed over. */
  public String describe() {
    java.util.Map<String, Integer> byName = new java.util.TreeMap<>();
    for (ProcessHandle p : serviceProcesses(null)) {
      String cmd = p.info().command().orElse("?");
      byName.merge(cmd.substring(cmd.lastIndexOf('/') + 1), 1, Integer::sum);
    }
    StringBuilder sb = new StringBuilder("this JVM");
    byName.forEach((k, v) -> sb.append(" + ").append(v).append(' ').append(k));
    return sb.toString();
  }
}
