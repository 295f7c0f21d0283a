package io.flashsale.evidence;

import io.flashsale.activities.Safeguards;
import io.flashsale.launcher.FlashsaleApplication;
import io.flashsale.workflows.OrderActivities;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The entry point of X-33's first worker JVM: the flashsale command line whose order activities
 * die right after {@code beginPay} committed, for one order. The system property
 * {@value #MARKER_PROPERTY} names a file; when it holds an order id, the real {@code beginPay} of
 * that order runs and commits CREATED→PAYING, and then this process halts (exit 137, as a SIGKILL
 * shows) before the step's result reaches the workflow: the pay's workflow task, which runs the
 * step as a local activity, never completes. Every other order, and every other step, runs as
 * usual. Test classpath only.
 */
public final class WorkerHaltingAfterBeginPay {
  static final String MARKER_PROPERTY = "x33.haltAfterBeginPayOf";
  static final String HALT_LINE = "X-33 halting after beginPay committed for ";

  private WorkerHaltingAfterBeginPay() {}

  public static void main(String[] args) throws Exception {
    Path marker = Path.of(System.getProperty(MARKER_PROPERTY));
    System.out.println("X-33: this worker halts right after beginPay committed for the order named in " + marker);
    new FlashsaleApplication(new Safeguards(), real -> haltingAfterBeginPay(real, marker)).run(args);
  }

  static OrderActivities haltingAfterBeginPay(OrderActivities real, Path marker) {
    InvocationHandler h = (proxy, method, args) -> {
      Object result;
      try {
        result = method.invoke(real, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
      if (method.getName().equals("beginPay") && args != null && args[0].equals(chosen(marker))) {
        System.out.println(HALT_LINE + args[0] + ": " + result);
        System.out.flush();
        Runtime.getRuntime().halt(137);
      }
      return result;
    };
    return (OrderActivities) Proxy.newProxyInstance(OrderActivities.class.getClassLoader(),
        new Class<?>[] {OrderActivities.class}, h);
  }

  private static String chosen(Path marker) {
    try {
      return Files.exists(marker) ? Files.readString(marker).trim() : null;
    } catch (java.io.IOException e) {
      return null;
    }
  }
}
