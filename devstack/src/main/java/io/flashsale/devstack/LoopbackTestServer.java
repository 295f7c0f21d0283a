package io.flashsale.devstack;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.temporal.internal.testservice.GRPCServerHelper;
import io.temporal.internal.testservice.TestServicesStarter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * Temporal's in-memory test server on 127.0.0.1 only. temporal-testing's own port-bound server
 * listens on every interface with no authentication (anyone on the network could pay or
 * terminate any order), and takes no address; this builds the same services on a loopback
 * socket instead. Time skipping stays locked, as in the port-bound server.
 */
public final class LoopbackTestServer implements AutoCloseable {
  private final TestServicesStarter services;
  private final Server server;

  private LoopbackTestServer(TestServicesStarter services, Server server) {
    this.services = services;
    this.server = server;
  }

  public static LoopbackTestServer start(int port) throws IOException {
    TestServicesStarter services = new TestServicesStarter(true, 0);
    NettyServerBuilder builder = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port));
    GRPCServerHelper.registerServicesAndHealthChecks(services.getServices(), builder);
    try {
      return new LoopbackTestServer(services, builder.build().start());
    } catch (IOException e) {
      services.close();
      throw new IOException("port " + port + " on 127.0.0.1 is held by another process; stop it or choose another"
          + " port (temporal.embeddedPort)", e);
    }
  }

  @Override
  public void close() {
    server.shutdown();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    services.close();
    server.shutdownNow();
  }
}
