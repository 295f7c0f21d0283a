package io.flashsale.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dropwizard.core.server.DefaultServerFactory;
import io.dropwizard.jetty.ConnectorFactory;
import io.dropwizard.jetty.HttpConnectorFactory;
import io.dropwizard.util.DataSize;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.junit.jupiter.api.Test;

/** Jetty's 12-byte chunk-header buffer comes from the pool, not from a new direct allocation per response. */
class SmallBufferPoolTest {
  /** The pool a connector builds (HttpConnectorFactory.buildBufferPool), from the same three settings. */
  private static ArrayByteBufferPool poolOf(HttpConnectorFactory h) {
    return new ArrayByteBufferPool((int) h.getMinBufferPoolSize().toBytes(), (int) h.getBufferPoolIncrement().toBytes(),
        (int) h.getMaxBufferPoolSize().toBytes());
  }

  /** Takes and gives back one chunk-header buffer; the direct buffers the pool then keeps. */
  private static long keptAfterAChunkHeader(ArrayByteBufferPool pool) {
    RetainableByteBuffer b = pool.acquire(12, true); // HttpGenerator.CHUNK_SIZE
    b.release();
    return pool.getDirectByteBufferCount();
  }

  private static List<HttpConnectorFactory> connectors(DefaultServerFactory f) {
    List<HttpConnectorFactory> all = new ArrayList<>();
    for (ConnectorFactory c : f.getApplicationConnectors()) all.add((HttpConnectorFactory) c);
    for (ConnectorFactory c : f.getAdminConnectors()) all.add((HttpConnectorFactory) c);
    return all;
  }

  @Test
  void dropwizardsDefaultLeavesTheChunkHeaderUnpooled() {
    HttpConnectorFactory dropwizardDefault = new HttpConnectorFactory();
    assertEquals(FlashsaleApplication.DROPWIZARD_MIN_BUFFER_POOL_BYTES, dropwizardDefault.getMinBufferPoolSize().toBytes());
    assertEquals(0, keptAfterAChunkHeader(poolOf(dropwizardDefault)), "below the pool's minimum: allocated and dropped");
  }

  @Test
  void everyConnectorOfTheServicePoolsIt() {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    FlashsaleApplication.poolSmallBuffers(cfg);
    List<HttpConnectorFactory> all = connectors((DefaultServerFactory) cfg.getServerFactory());
    assertEquals(2, all.size(), "the application and the admin connector");
    for (HttpConnectorFactory h : all) assertEquals(1, keptAfterAChunkHeader(poolOf(h)), "kept for the next response");
  }

  @Test
  void aConfiguredMinimumStays() {
    FlashsaleConfiguration cfg = new FlashsaleConfiguration();
    HttpConnectorFactory h = connectors((DefaultServerFactory) cfg.getServerFactory()).get(0);
    h.setMinBufferPoolSize(DataSize.bytes(128));
    FlashsaleApplication.poolSmallBuffers(cfg);
    assertEquals(128, h.getMinBufferPoolSize().toBytes());
  }
}
