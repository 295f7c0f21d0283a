package io.flashsale.paymentchannel;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every channel adapter and callback format of this module has its own test class, named after it
 * ({@code <Name>Test}, in its package): a new channel's format cannot come without the tests of
 * its refusals (docs/DESIGN.md "Add a payment channel"). The HTTP adapter of the stub is tested
 * against the stub by the experiments instead (listed here).
 */
class ChannelAdaptersTest {
  /** Adapters whose contract the experiments run against the channel stub. */
  private static final List<String> TESTED_BY_EXPERIMENTS = List.of("io.flashsale.paymentchannel.http.HttpPaymentChannel");

  @Test
  void everyReaderAndAdapterHasItsTest() throws Exception {
    List<String> found = new ArrayList<>();
    List<String> untested = new ArrayList<>();
    for (Class<?> c : productClasses()) {
      if (c.isInterface() || Modifier.isAbstract(c.getModifiers())) continue;
      if (!CallbackReader.class.isAssignableFrom(c) && !PaymentChannel.class.isAssignableFrom(c)) continue;
      found.add(c.getName());
      if (TESTED_BY_EXPERIMENTS.contains(c.getName())) continue;
      try {
        Class.forName(c.getName() + "Test");
      } catch (ClassNotFoundException e) {
        untested.add(c.getName());
      }
    }
    assertTrue(found.contains("io.flashsale.paymentchannel.http.SignedJsonCallbacks"), "the scan found the readers: " + found);
    assertTrue(untested.isEmpty(), "channel adapters or callback formats without their <Name>Test: " + untested);
    assertFalse(found.isEmpty());
  }

  private static List<Class<?>> productClasses() throws IOException, URISyntaxException, ClassNotFoundException {
    Path root = Paths.get(CallbackReader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<Class<?>> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".class") && !p.toString().contains("$")).toList()) {
        String name = root.relativize(f).toString().replace('/', '.').replaceAll("\\.class$", "");
        out.add(Class.forName(name, false, ChannelAdaptersTest.class.getClassLoader()));
      }
    }
    return out;
  }
}
