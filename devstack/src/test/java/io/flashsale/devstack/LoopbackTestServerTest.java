package io.flashsale.devstack;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.Socket;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The in-memory engine answers on 127.0.0.1 and on no other address of this machine. */
class LoopbackTestServerTest {
  @Test
  void listensOnLoopbackOnly() throws Exception {
    int port = LocalPorts.shared().reserve(); // held for this JVM: bound below
    List<InetAddress> others = Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
        .flatMap(i -> Collections.list(i.getInetAddresses()).stream())
        .filter(a -> a instanceof Inet4Address && !a.isLoopbackAddress())
        .toList();
    assertFalse(others.isEmpty(), "this check needs a non-loopback address on the machine");
    try (LoopbackTestServer server = LoopbackTestServer.start(port)) {
      assertTrue(connects(InetAddress.getByName("127.0.0.1"), port), "reachable on 127.0.0.1");
      for (InetAddress a : others) assertFalse(connects(a, port), "not reachable on " + a.getHostAddress());
    }
  }

  private static boolean connects(InetAddress address, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(address, port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
