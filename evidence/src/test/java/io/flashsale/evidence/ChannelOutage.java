package io.flashsale.evidence;

import io.flashsale.channel.ChannelStub;
import io.flashsale.devstack.EmbeddedStack;
import java.lang.reflect.Field;
import java.util.Map;
import java.util.Set;

/**
 * Takes the local stack's channel stub away and brings it back, as a provider's outage would: the
 * stub is stopped, so its port refuses every connection at once (a charge, query or close fails
 * fast with an I/O error, the health probe too), and later a stub is started again on the same
 * host and port with the service's merchant key, callback secret and notify URL and the same
 * ledger file, so what the "bank" knows survives; its fault rules, stats and callbacks not yet sent
 * do not. The stub's behaviour is the
 * product's; only who holds it changes: the new stub takes the old one's place in the local stack
 * (a test-side reach into {@link EmbeddedStack}, which has no accessor for it), so the stack's stop
 * stops it as it would have stopped the first.
 */
final class ChannelOutage {
  private final Stack stack;
  private ChannelStub down;

  ChannelOutage(Stack stack) {
    this.stack = stack;
  }

  /** Stops the stub; until {@link #end()} its port refuses connections. */
  void begin() {
    if (down != null) throw new IllegalStateException("the channel is already down");
    ChannelStub stub = current();
    stub.stop();
    Stack.awaitStopped(Map.of("channel stub", stub.port()), 10_000);
    down = stub;
  }

  /** A stub on the same port and ledger file, in the stack's hands again. */
  void end() {
    if (down == null) throw new IllegalStateException("the channel is not down");
    java.nio.file.Path ledger = EmbeddedStack.of(stack.wiring.stack()).dataDir().toPath().resolve("channel-ledger.jsonl");
    ChannelStub fresh = ChannelStub.start(new ChannelStub.Settings("127.0.0.1", down.port(), stack.wiring.merchantKey(),
        stack.wiring.callbackSecret(), Set.of("http://127.0.0.1:" + stack.wiring.apiPort() + "/callbacks/payment"),
        null, ledger));
    set(fresh);
    down = null;
  }

  boolean isDown() {
    return down != null;
  }

  private ChannelStub current() {
    try {
      return (ChannelStub) field().get(EmbeddedStack.of(stack.wiring.stack()));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot reach the local stack's channel stub", e);
    }
  }

  private void set(ChannelStub stub) {
    try {
      field().set(EmbeddedStack.of(stack.wiring.stack()), stub);
    } catch (ReflectiveOperationException e) {
      stub.stop();
      throw new IllegalStateException("cannot hand the new channel stub to the local stack", e);
    }
  }

  private static Field field() throws NoSuchFieldException {
    Field f = EmbeddedStack.class.getDeclaredField("channel");
    f.setAccessible(true);
    return f;
  }
}
