package io.flashsale.evidence;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The record of one experiment: notes (timelines, effects, reconcile lines), every invariant
 * checked, and the RESULT line. Written to target/evidence/&lt;id&gt;.txt; evidence/run.sh joins
 * them into evidence/output.txt.
 */
public final class Evidence implements AfterEachCallback, AfterAllCallback {
  private final String id;
  private final String title;
  private final List<String> lines = new ArrayList<>();
  private int passed;
  private int failed;

  public Evidence(String id, String title) {
    this.id = id;
    this.title = title;
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
      if (!(e instanceof AssertionError && String.valueOf(e.getMessage()).startsWith(id + ":"))) {
        failed++;
        lines.add("FAIL " + context.getDisplayName() + " threw " + e);
      }
    });
  }

  @Override
  public synchronized void afterAll(ExtensionContext context) throws IOException {
    String engine = Stack.ENGINE;
    StringBuilder sb = new StringBuilder("== ").append(id).append(" [").append(engine).append("] ").append(title)
        .append('\n');
    for (String l : lines) sb.append(l).append('\n');
    sb.append("RESULT ").append(id).append(' ').append(failed == 0 && passed > 0 ? "PASS" : "FAIL").append(" [")
        .append(engine).append("] ").append(title).append('\n');
    sb.append("ASSERTIONS passed=").append(passed).append(" failed=").append(failed).append('\n');
    Path dir = Path.of(System.getProperty("evidence.dir", "target/evidence"));
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(id + "@" + engine + ".txt"), sb.toString());
    System.out.print(sb);
  }
}
