package io.flashsale.evidence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * evidence/summary.sh, which turns the result files into evidence/output.txt: the experiments it
 * expects come from the sources and their tags, and one that wrote no result is a FAIL line,
 * counted in SUMMARY failed=, with a non-zero exit.
 */
@Tag("in-memory-only") // engine-free: it runs once, in the fast run
class EvidenceSummaryTest {
  @TempDir Path tmp;

  @Test
  void aMissingResultIsAFailAndANonZeroExit() throws Exception {
    Path src = sources();
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true);
    result(results, "T-01", "dev-server", true);
    result(results, "T-03", "embedded", true);
    // T-02 (dev-server only) wrote nothing: its JVM died

    Run r = summary(src, results, "embedded", "dev-server");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("RESULT T-02 FAIL [dev-server] no result: BTest did not run or its JVM died"), r.output);
    assertTrue(r.output.contains("ENGINE embedded experiments=2 expected=2"), r.output);
    assertTrue(r.output.contains("ENGINE dev-server experiments=1 expected=2"), r.output);
    assertTrue(r.output.contains("SUMMARY passed=9 failed=1"), r.output);
    assertFalse(r.output.contains("T-02 FAIL [embedded]"), "dev-server-only: not expected on the in-memory engine");
    assertFalse(r.output.contains("T-03 FAIL [dev-server]"), "in-memory-only: not expected on the dev server");
    assertFalse(r.output.contains("T-04"), "@Disabled: not expected");
    assertTrue(r.file.contains("RESULT T-02 FAIL [dev-server] no result"), "the FAIL line is in the output file");

    result(results, "T-02", "dev-server", true);
    Run complete = summary(src, results, "embedded", "dev-server");
    assertEquals(0, complete.exit, complete.output);
    assertTrue(complete.output.contains("SUMMARY passed=12 failed=0"), complete.output);
  }

  @Test
  void onlyTheNamedEngineIsExpectedAndAFailedResultCounts() throws Exception {
    Path src = sources();
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", false);
    result(results, "T-03", "embedded", true);
    Run r = summary(src, results, "embedded");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("SUMMARY passed=6 failed=1"), r.output);
    assertFalse(r.output.contains("dev-server"), r.output);
  }

  @Test
  void aFailedPlainTestClassIsAFail() throws Exception {
    Path src = sources();
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true);
    result(results, "T-03", "embedded", true);
    Path reports = Files.createDirectories(tmp.resolve("reports").resolve("embedded"));
    // surefire's report of a class without an Evidence id (like the replay timer check) that failed
    Files.writeString(reports.resolve("TEST-io.flashsale.evidence.TimersTest.xml"), "<?xml version=\"1.0\"?>\n"
        + "<testsuite name=\"io.flashsale.evidence.TimersTest\" tests=\"2\" errors=\"0\" skipped=\"0\" failures=\"1\">\n");
    // an experiment's own report is not counted twice: its result file says how it went
    Files.writeString(reports.resolve("TEST-io.flashsale.evidence.ATest.xml"), "<?xml version=\"1.0\"?>\n"
        + "<testsuite name=\"io.flashsale.evidence.ATest\" tests=\"1\" errors=\"1\" skipped=\"0\" failures=\"0\">\n");
    Run r = summary(src, results, "embedded");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("RESULT TimersTest FAIL [embedded] 1 failing test(s)"), r.output);
    assertFalse(r.output.contains("RESULT ATest"), r.output);
    assertTrue(r.output.contains("SUMMARY passed=6 failed=1"), r.output);
  }

  @Test
  void theRealExperimentsAreExpectedPerTheirTags() throws Exception {
    Path src = Path.of("src/test/java");
    Run r = summary(src, Files.createDirectories(tmp.resolve("none")), "embedded", "dev-server");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("RESULT X-23 FAIL [embedded] no result: ReplayTest"), r.output);
    assertFalse(r.output.contains("X-23 FAIL [dev-server]"), "the replay test is in-memory-only");
    assertTrue(r.output.contains("RESULT X-08 FAIL [dev-server]"), r.output);
    assertFalse(r.output.contains("X-08 FAIL [embedded]"), "X-08 is dev-server-only");
    assertTrue(r.output.contains("RESULT C29-01 FAIL [embedded]") && r.output.contains("RESULT C29-01 FAIL [dev-server]"),
        r.output);
    assertTrue(r.output.contains("RESULT X-24 FAIL [embedded]") && r.output.contains("RESULT X-24 FAIL [dev-server]"),
        r.output);
    // only real ids: C29-01, X-23, CAP-07, ... (not text that merely looks like a constructor call)
    for (String line : r.output.lines().filter(l -> l.startsWith("RESULT ")).toList()) {
      assertTrue(line.matches("RESULT [A-Z0-9]+-\\d+ FAIL \\[(embedded|dev-server)\\] no result: \\w+ did not run.*"), line);
    }
  }

  /** Experiments as the real ones are written: an id, class-level tags, a call split over lines. */
  private Path sources() throws IOException {
    Path src = Files.createDirectories(tmp.resolve("src/io/flashsale/evidence"));
    Files.writeString(src.resolve("ATest.java"), "class ATest {\n  static final Evidence ev = " + evidence("T-01")
        + ";\n}\n");
    Files.writeString(src.resolve("BTest.java"), "/** runs on the dev server only */\n@Tag(\"dev-server-only\")\n"
        + "class BTest {\n  static final Evidence ev = new Evidence(\n      \"T-02\", \"b\");\n}\n");
    Files.writeString(src.resolve("CTest.java"), "@org.junit.jupiter.api.Tag(\"in-memory-only\") // time skipping\n"
        + "final class CTest {\n  static final Evidence ev = " + evidence("T-03") + ";\n}\n");
    Files.writeString(src.resolve("DTest.java"), "@org.junit.jupiter.api.Disabled\nclass DTest {\n"
        + "  static final Evidence ev = " + evidence("T-04") + ";\n}\n");
    Files.writeString(src.resolve("Helper.java"), "final class Helper {\n  static int n() { return 1; }\n}\n");
    return src.getParent().getParent().getParent();
  }

  private static String evidence(String id) {
    return "new Evidence(" + '"' + id + '"' + ", \"title\")";
  }

  /** A result file as Evidence writes it, with three assertions. */
  private static void result(Path dir, String id, String engine, boolean pass) throws IOException {
    String verdict = pass ? "PASS" : "FAIL";
    Files.writeString(dir.resolve(id + "@" + engine + ".txt"), "== " + id + " [" + engine + "] title\n"
        + "ok   one\nok   two\nok   three\nRESULT " + id + " " + verdict + " [" + engine + "] title\n"
        + "ASSERTIONS passed=3 failed=" + (pass ? 0 : 1) + "\n");
  }

  private record Run(int exit, String output, String file) {}

  private Run summary(Path sources, Path results, String... engines) throws Exception {
    Path out = tmp.resolve("output-" + System.nanoTime() + ".txt");
    List<String> cmd = new ArrayList<>(List.of("bash", Path.of("summary.sh").toAbsolutePath().toString(),
        "--sources", sources.toAbsolutePath().toString(), "--results", results.toString(),
        "--reports", tmp.resolve("reports").toString(), "--out", out.toString()));
    cmd.addAll(List.of(engines));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int exit = p.waitFor();
    return new Run(exit, output, Files.exists(out) ? Files.readString(out) : "");
  }
}
