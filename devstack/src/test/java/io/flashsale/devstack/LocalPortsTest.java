package io.flashsale.devstack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalPortsTest {
  @TempDir Path dir;

  @Test
  void twoAllocatorsInOneJvmNeverShareAHeldPort() throws Exception {
    LocalPorts a = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    LocalPorts b = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    int p = a.reserve();
    assertTrue(a.holds(p));
    assertFalse(b.tryReserve(p), "a port the other allocator holds");
    assertFalse(a.tryReserve(p), "nor again from the one that holds it");
    a.release(p);
    assertTrue(b.tryReserve(p), "given back: the other one may take it");
    assertFalse(new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH).tryReserve(p), "held by b now");
    b.releaseAll();
    assertFalse(a.tryReserve(p), "a does not hand out what it released a moment ago (cool-down)");
  }

  @Test
  void manyReservationsAreDistinctInTheRangeAndOutsideTheEphemeralOne() throws Exception {
    LocalPorts a = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    LocalPorts b = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    int[] ephemeral = LocalPorts.ephemeralRange();
    Set<Integer> seen = new HashSet<>();
    try {
      for (int i = 0; i < 150; i++) {
        for (LocalPorts ports : List.of(a, b)) {
          int p = ports.reserve();
          assertTrue(seen.add(p), "handed out twice: " + p);
          assertTrue(p >= LocalPorts.LOW && p < LocalPorts.HIGH, "in the range: " + p);
          assertFalse(p >= ephemeral[0] && p <= ephemeral[1], "outside the ephemeral range: " + p);
        }
      }
    } finally {
      a.releaseAll();
      b.releaseAll();
    }
  }

  @Test
  void aPortSomeoneListensOnIsNotHandedOut() throws Exception {
    LocalPorts a = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    int p = a.reserve();
    a.release(p);
    LocalPorts b = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    try (ServerSocket listening = new ServerSocket(p, 1, InetAddress.getByName("127.0.0.1"))) {
      assertFalse(b.tryReserve(p), "bound by a process that does not use the allocator");
    }
    assertTrue(b.tryReserve(p));
    b.releaseAll();
  }

  @Test
  void aBlockHoldsEveryOffset() throws Exception {
    LocalPorts a = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    LocalPorts b = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    int[] offsets = {0, 1, 2, 6, 10, 20, 21, 22, 26, 30};
    int base = a.reserveBlock(offsets);
    for (int o : offsets) {
      assertTrue(a.holds(base + o));
      assertFalse(b.tryReserve(base + o), "offset " + o + " is held");
    }
    assertTrue(base + 30 < 32_768, "below the Temporal server's smallint ports");
    a.releaseAll();
  }

  @Test
  void anotherProcessCannotTakeAHeldPortAndGetsItWhenTheHolderDies() throws Exception {
    LocalPorts here = new LocalPorts(dir, LocalPorts.LOW, LocalPorts.HIGH);
    int mine = here.reserve();
    Process child = child("try", String.valueOf(mine));
    try (BufferedReader out = reader(child)) {
      assertEquals("taken=false", out.readLine(), "the other JVM cannot take the port this one holds");
    }
    assertTrue(child.waitFor(60, TimeUnit.SECONDS));
    here.release(mine);
    Process again = child("try", String.valueOf(mine));
    try (BufferedReader out = reader(again)) {
      assertEquals("taken=true", out.readLine(), "released: the other JVM takes it");
    }
    assertTrue(again.waitFor(60, TimeUnit.SECONDS));

    // the other way round: a port held by a process that is then killed comes free
    Process holder = child("hold");
    int theirs;
    try (BufferedReader out = reader(holder)) {
      String line = out.readLine();
      assertTrue(line != null && line.startsWith("held="), "the child reserved one: " + line);
      theirs = Integer.parseInt(line.substring("held=".length()));
      assertFalse(here.tryReserve(theirs), "this JVM cannot take the port the child holds");
      holder.destroyForcibly();
      assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
    }
    assertTrue(here.tryReserve(theirs), "the killed holder's lock is gone with it");
    here.releaseAll();
  }

  private Process child(String... args) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new java.util.ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
        Child.class.getName(), dir.toString()));
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  private static BufferedReader reader(Process p) {
    return new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
  }

  /** The other JVM: "try PORT" prints whether it could take the port; "hold" reserves one and waits. */
  public static final class Child {
    public static void main(String[] args) throws Exception {
      LocalPorts ports = new LocalPorts(Path.of(args[0]), LocalPorts.LOW, LocalPorts.HIGH);
      PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
      if (args[1].equals("try")) {
        out.println("taken=" + ports.tryReserve(Integer.parseInt(args[2])));
        return;
      }
      out.println("held=" + ports.reserve());
      Thread.sleep(120_000);
    }
  }
}
