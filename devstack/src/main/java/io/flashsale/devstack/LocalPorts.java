package io.flashsale.devstack;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports on 127.0.0.1 for the pieces a test stack or the local cluster starts, reserved across
 * processes: a port handed out is held by an exclusive lock on the file {@code <port>.lock} in a
 * folder every process shares ({@code ${java.io.tmpdir}/flashsale-ports}, or the system property
 * {@value #DIR_PROPERTY}) until it is {@linkplain #release released} or the process ends (the
 * operating system drops a dead process's locks, even after SIGKILL). So two JVMs that start
 * stacks at once (the in-memory engine's experiments and the dev server's) never get the same
 * port, and neither does a second allocator in one JVM, while it is held.
 *
 * <p>Ports come from {@value #LOW}–{@value #HIGH} (below 32 768, which the Temporal server needs
 * for its membership ports), less Linux's ephemeral range as {@code
 * /proc/sys/net/ipv4/ip_local_port_range} gives it: a port handed out is bound later, by a child
 * process or a server starting, and an outgoing connection made meanwhile takes its source port
 * from the ephemeral range only. A port is handed out only if it binds at that moment; one
 * released is not handed out again by this JVM for {@value #COOL_DOWN_MS} ms (a server that just
 * stopped may still hold it briefly).
 *
 * <p>The lock files stay: deleting one could let two processes lock two different files of the
 * same name. Within one JVM a file is opened by one channel at a time (closing a second channel
 * would drop the JVM's lock on it), so every allocator of the JVM claims the file here first.
 */
public final class LocalPorts {
  public static final String DIR_PROPERTY = "flashsale.ports.dir";
  public static final int LOW = 20_000;
  public static final int HIGH = 32_000;
  static final long COOL_DOWN_MS = 60_000;
  private static final int ATTEMPTS = 400;

  /** The lock files this JVM holds or is taking, by any allocator: one channel per file. */
  private static final Set<Path> CLAIMED_IN_JVM = ConcurrentHashMap.newKeySet();

  private static volatile LocalPorts shared;

  private final Path dir;
  private final int low;
  private final int high;
  private final int[] ephemeral;
  private final Map<Integer, Held> held = new LinkedHashMap<>();
  private final Map<Integer, Long> releasedAt = new LinkedHashMap<>();

  private record Held(Path file, FileChannel channel, FileLock lock) {}

  /** The JVM's allocator on the shared folder. */
  public static LocalPorts shared() {
    LocalPorts s = shared;
    if (s == null) {
      synchronized (LocalPorts.class) {
        if (shared == null) {
          String dir = System.getProperty(DIR_PROPERTY);
          shared = new LocalPorts(dir != null ? Path.of(dir)
              : Path.of(System.getProperty("java.io.tmpdir"), "flashsale-ports"), LOW, HIGH);
        }
        s = shared;
      }
    }
    return s;
  }

  /** An allocator on a folder of lock files and a range of ports [low, high). */
  public LocalPorts(Path dir, int low, int high) {
    if (low < 1024 || high > 65_536 || low >= high) throw new IllegalArgumentException("ports " + low + "-" + high);
    this.dir = dir.toAbsolutePath().normalize();
    this.low = low;
    this.high = high;
    this.ephemeral = ephemeralRange();
  }

  public Path dir() {
    return dir;
  }

  /** Linux's ephemeral range (first, last); 32768–60999 where it cannot be read. */
  static int[] ephemeralRange() {
    try {
      String[] parts = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim().split("\\s+");
      return new int[] {Integer.parseInt(parts[0]), Integer.parseInt(parts[1])};
    } catch (IOException | RuntimeException e) {
      return new int[] {32_768, 60_999};
    }
  }

  private boolean ephemeral(int port) {
    return port >= ephemeral[0] && port <= ephemeral[1];
  }

  /** False only where the whole range is ephemeral (an odd machine): then the range as it is. */
  private boolean avoidEphemeral() {
    return low < ephemeral[0] || high - 1 > ephemeral[1];
  }

  /** A free port, held until released or this process ends. */
  public synchronized int reserve() throws IOException {
    return reserveBlock(0);
  }

  /**
   * A base port such that base + each offset is free; all of them held until released (each on
   * its own). For a server that listens on several ports at fixed offsets from one.
   */
  public synchronized int reserveBlock(int... offsets) throws IOException {
    if (offsets.length == 0) throw new IllegalArgumentException("no offsets");
    int span = 0;
    for (int o : offsets) {
      if (o < 0) throw new IllegalArgumentException("offset " + o);
      span = Math.max(span, o);
    }
    if (high - low <= span) throw new IllegalArgumentException("offsets wider than the range");
    Files.createDirectories(dir);
    boolean avoidEphemeral = avoidEphemeral();
    ThreadLocalRandom rnd = ThreadLocalRandom.current();
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      int base = rnd.nextInt(low, high - span);
      List<Integer> taken = new ArrayList<>();
      boolean all = true;
      for (int o : offsets) {
        if ((!avoidEphemeral || !ephemeral(base + o)) && tryTake(base + o)) {
          taken.add(base + o);
        } else {
          all = false;
          break;
        }
      }
      if (all) return base;
      for (int p : taken) release(p);
      for (int p : taken) releasedAt.remove(p); // never bound by anyone: no cool-down
    }
    throw new IOException("no free " + (offsets.length == 1 ? "port" : "block of ports") + " in " + low + "-" + high
        + " after " + ATTEMPTS + " attempts (" + held.size() + " held here; lock files in " + dir + ")");
  }

  /**
   * Takes this very port if no allocator holds it and it binds now; false if not. (For a process
   * that must come back on a given port, and for the tests.)
   */
  public synchronized boolean tryReserve(int port) throws IOException {
    if (port < 1 || port > 65_535) throw new IllegalArgumentException("port " + port);
    Files.createDirectories(dir);
    return tryTake(port);
  }

  private boolean tryTake(int port) throws IOException {
    if (held.containsKey(port)) return false;
    Long released = releasedAt.get(port);
    if (released != null) {
      if (System.currentTimeMillis() - released < COOL_DOWN_MS) return false;
      releasedAt.remove(port);
    }
    Path file = dir.resolve(port + ".lock");
    if (!CLAIMED_IN_JVM.add(file)) return false; // another allocator of this JVM holds or takes it
    FileChannel channel = null;
    try {
      channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      FileLock lock;
      try {
        lock = channel.tryLock();
      } catch (OverlappingFileLockException sameJvm) {
        lock = null;
      }
      if (lock == null || !binds(port)) {
        if (lock != null) lock.release();
        channel.close();
        CLAIMED_IN_JVM.remove(file);
        return false;
      }
      // who holds it, for a person looking at the folder; the lock is what counts
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      held.put(port, new Held(file, channel, lock));
      return true;
    } catch (IOException | RuntimeException e) {
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException ignored) {
          // closing drops the lock anyway
        }
      }
      CLAIMED_IN_JVM.remove(file);
      throw e;
    }
  }

  private static boolean binds(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 1);
      return true;
    } catch (IOException busy) {
      return false;
    }
  }

  /** Whether this allocator holds the port. */
  public synchronized boolean holds(int port) {
    return held.containsKey(port);
  }

  /** Gives the port back (a port this allocator does not hold: nothing happens). */
  public synchronized void release(int port) {
    Held h = held.remove(port);
    if (h == null) return;
    try {
      h.lock().release();
      h.channel().close();
    } catch (IOException e) {
      // the lock goes with the channel, or with the process
    } finally {
      CLAIMED_IN_JVM.remove(h.file());
      releasedAt.put(port, System.currentTimeMillis());
    }
  }

  /** Gives back every port this allocator holds. */
  public synchronized void releaseAll() {
    for (int port : List.copyOf(held.keySet())) release(port);
  }
}
