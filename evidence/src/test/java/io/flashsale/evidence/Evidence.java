package io.flashsale.evidence;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * The record of one experiment: notes (timelines, effects, reconcile lines), every invariant
 * checked, and the RESULT line. Written to target/evidence/&lt;id&gt;@&lt;engine&gt;.txt;
 * evidence/summary.sh joins them into evidence/output.txt.
 *
 * <p>The record is written when the class is done with, after every other extension's
 * {@code afterAll} (stopping the {@link Stack}, restoring safeguards, whatever the order of the
 * fields): a failure there is a FAIL line and makes the RESULT FAIL. A test skipped by an
 * assumption fails the experiment too (a missing component must not pass as a skip); a
 * {@code @Disabled} test is listed with its reason.
 */
public final class Evidence implements AfterEachCallback, AfterAllCallback, TestWatcher {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(Evidence.class);
  /** id → the class that claimed it in this JVM: two experiments must not write one result file. */
  private static final Map<String, String> CLAIMS = new ConcurrentHashMap<>();

  private final String id;
  private final String title;
  private final List<String> lines = new ArrayList<>();
  private int passed;
  private int failed;
  private int disabled;
  private Path dir = Path.of(System.getProperty("evidence.dir", "target/evidence"));

  /** The experiment's id, e.g. X-30. */
  public String id() {
    return id;
  }

  public Evidence(String id, String title) {
    this.id = id;
    this.title = title;
  }

  /** Writes the record into another folder (the harness's own tests). */
  Evidence writingTo(Path folder) {
    this.dir = folder;
    return this;
  }

  public synchronized void note(String text) {
    lines.add("note " + text);
    System.out.println(id + " note " + text);
  }

  /** An invariant: counted, recorded, and a failing test if it does not hold. */
  public synchronized void check(boolean holds, String what) {
    if (holds) {
      passed++;
      lines.add("ok   " + what);
    } else {
      failed++;
      lines.add("FAIL " + what);
      throw new AssertionError(id + ": " + what);
    }
  }

  public void equal(Object expected, Object actual, String what) {
    check(Objects.equals(expected, actual), what + " (expected " + expected + ", got " + actual + ")");
  }

  @Override
  public synchronized void afterEach(ExtensionContext context) {
    context.getExecutionException().ifPresent(e -> {
      // a skip by an assumption is counted by testAborted
      if (!ownAssertion(e) && !(e instanceof org.opentest4j.TestAbortedException)) {
        failed++;
        lines.add("FAIL " + context.getDisplayName() + " threw " + e);
      }
    });
  }

  @Override
  public synchronized void testDisabled(ExtensionContext context, Optional<String> reason) {
    disabled++;
    lines.add("DISABLED " + context.getDisplayName() + ": " + reason.orElse("no reason given"));
  }

  @Override
  public synchronized void testAborted(ExtensionContext context, Throwable cause) {
    failed++;
    lines.add("FAIL " + context.getDisplayName() + " skipped by an assumption (" + cause.getMessage()
        + "): a component it needs is missing, which fails the experiment");
  }

  /**
   * Registers the write for the end of the class: JUnit closes the class's store after the last
   * {@code afterAll} callback, with their failures collected in the class's execution exception.
   */
  @Override
  public void afterAll(ExtensionContext context) {
    context.getStore(NAMESPACE).put(id, (AutoCloseable) () -> write(context));
  }

  private boolean ownAssertion(Throwable e) {
    return e instanceof AssertionError && String.valueOf(e.getMessage()).startsWith(id + ":");
  }

  private synchronized void write(ExtensionContext context) throws IOException {
    String cls = context.getRequiredTestClass().getSimpleName();
    String other = CLAIMS.putIfAbsent(id, cls);
    if (other != null && !other.equals(cls)) {
      failed++;
      lines.add("FAIL the id " + id + " is claimed by " + other + " too: each experiment needs its own id");
    }
    // what went wrong outside the tests: a stack that did not stop, a safeguard not restored
    context.getExecutionException().ifPresent(e -> {
      List<Throwable> all = new ArrayList<>(List.of(e));
      all.addAll(List.of(e.getSuppressed()));
      for (Throwable t : all) {
        if (ownAssertion(t)) continue;
        failed++;
        lines.add("FAIL " + cls + " outside its tests (setup or teardown): " + t);
      }
    });
    String engine = Stack.ENGINE;
    String verdict = failed > 0 ? "FAIL" : passed > 0 ? "PASS" : disabled > 0 ? "DISABLED" : "FAIL";
    if (failed == 0 && passed == 0 && disabled == 0) lines.add("FAIL no invariant was checked");
    StringBuilder sb = new StringBuilder("== ").append(id).append(" [").append(engine).append("] ").append(title)
        .append('\n');
    for (String l : lines) sb.append(l).append('\n');
    sb.append("RESULT ").append(id).append(' ').append(verdict).append(" [").append(engine).append("] ")
        .append(title).append('\n');
    sb.append("ASSERTIONS passed=").append(passed).append(" failed=").append(failed).append('\n');
    sb.append(RunStamp.CURRENT.line()).append('\n');
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(id + "@" + engine + ".txt"), sb.toString());
    System.out.print(sb);
  }
}
