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
 * expects come from the sources and their tags, and one that wrote no record of this run is a FAIL
 * line, counted in SUMMARY failed=, with a non-zero exit; two classes with one id fail the run; a
 * disabled or excluded experiment is listed; only this run's artefacts are published, and the
 * check of committed artefacts tells one run of HEAD's code from stale ones, and a report whose
 * lines were edited (a RESULT turned, added or deleted, an engine's half cut, a count changed)
 * from the one the summary wrote.
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
    assertFalse(r.output.contains("RESULT T-04"), "@Disabled: not expected");
    assertTrue(r.output.contains("DISABLED T-04 DTest: no reason given"), "but listed: " + r.output);
    assertTrue(r.output.contains("SKIPPED T-02 [embedded] BTest: tagged dev-server-only"), r.output);
    assertTrue(r.output.contains("SKIPPED T-03 [dev-server] CTest: tagged in-memory-only (time skipping)"), r.output);
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
    assertFalse(r.output.contains("[dev-server]"), r.output);
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
    Run r = summary(List.of(Path.of("src/test/java"), Path.of("../launcher/src/test/java")),
        Files.createDirectories(tmp.resolve("none")), List.of("embedded", "dev-server"), List.of());
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("RESULT X-23 FAIL [embedded] no result: ReplayTest"), r.output);
    assertFalse(r.output.contains("X-23 FAIL [dev-server]"), "the replay test is in-memory-only");
    assertTrue(r.output.contains("RESULT X-08 FAIL [dev-server]"), r.output);
    assertFalse(r.output.contains("X-08 FAIL [embedded]"), "X-08 is dev-server-only");
    assertTrue(r.output.contains("RESULT C29-01 FAIL [embedded]") && r.output.contains("RESULT C29-01 FAIL [dev-server]"),
        r.output);
    assertTrue(r.output.contains("RESULT X-24 FAIL [embedded]") && r.output.contains("RESULT X-24 FAIL [dev-server]"),
        r.output);
    // the property test writes its own record (EVIDENCE_ID), on Temporal's in-memory environment
    assertTrue(r.output.contains("RESULT PBT-01 FAIL [embedded] no result: OrderWorkflowPropertiesTest"), r.output);
    assertFalse(r.output.contains("PBT-01 FAIL [dev-server]"), r.output);
    // and a record per negative control it declares (EVIDENCE_CONTROLS)
    assertTrue(r.output.contains("RESULT PBT-01.TIMEOUT_IS_UNKNOWN-off FAIL [embedded] no result: OrderWorkflowPropertiesTest"),
        r.output);
    assertFalse(r.output.contains("duplicate experiment id"), "every real id is claimed once: " + r.output);
    // only real ids: C29-01, X-23, CAP-07, ... (not text that merely looks like a constructor call)
    for (String line : r.output.lines().filter(l -> l.startsWith("RESULT ")).toList()) {
      assertTrue(line.matches("RESULT [A-Z0-9]+-\\d+[a-z]?(\\.[A-Z_]+-off)? FAIL \\[(embedded|dev-server)\\] no result: \\w+ did not run.*"),
          line);
    }
  }

  @Test
  void twoClassesClaimingOneIdFailTheRun() throws Exception {
    Path src = sources();
    Files.writeString(src.resolve("io/flashsale/evidence/ETest.java"), "class ETest {\n  static final Evidence ev = "
        + evidence("T-01") + ";\n}\n");
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true);
    result(results, "T-03", "embedded", true);
    Run r = summary(src, results, "embedded");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("RESULT T-01 FAIL duplicate experiment id: ATest and ETest each claim it"), r.output);
    assertTrue(r.output.contains("SUMMARY passed=6 failed=1"), r.output);
  }

  @Test
  void eachNegativeControlAClassDeclaresIsAnExpectedRecordOfItsOwn() throws Exception {
    Path src = sources();
    Files.writeString(src.resolve("io/flashsale/evidence/PTest.java"), "@Tag(\"in-memory-only\")\nclass PTest {\n"
        + "  private static final String EVIDENCE_ID = \"P-01\";\n"
        + "  private static final String[] EVIDENCE_CONTROLS = {\"A-off\",\n      \"B-off\"};\n}\n");
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true);
    result(results, "T-03", "embedded", true);
    result(results, "P-01", "embedded", true);
    result(results, "P-01.A-off", "embedded", true);
    // P-01.B-off wrote nothing: the JVM died after the first control
    Run r = summary(src, results, "embedded");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("RESULT P-01.B-off FAIL [embedded] no result: PTest did not run or its JVM died"), r.output);
    assertTrue(r.output.contains("RESULT P-01.A-off PASS [embedded] title"), r.output);
    assertTrue(r.output.contains("ENGINE embedded experiments=4 expected=5"), r.output);
    assertTrue(r.output.contains("SUMMARY passed=12 failed=1"), r.output);

    // a control that caught nothing is a FAIL like any other record's
    result(results, "P-01.B-off", "embedded", false);
    Run uncaught = summary(src, results, "embedded");
    assertEquals(1, uncaught.exit, uncaught.output);
    assertTrue(uncaught.output.contains("RESULT P-01.B-off FAIL [embedded] title"), uncaught.output);
    assertTrue(uncaught.output.contains("ENGINE embedded experiments=5 expected=5"), uncaught.output);
    assertTrue(uncaught.output.contains("SUMMARY passed=15 failed=1"), uncaught.output);

    result(results, "P-01.B-off", "embedded", true);
    Run caught = summary(src, results, "embedded");
    assertEquals(0, caught.exit, caught.output);
    assertTrue(caught.output.contains("SUMMARY passed=15 failed=0"), caught.output);
  }

  @Test
  void aRecordOfAnotherRunIsStaleAndDoesNotCount() throws Exception {
    Path src = sources();
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true, "20261201T080000Z"); // left from an earlier run
    result(results, "T-03", "embedded", true);
    Run r = summary(src, results, "embedded");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("RESULT T-01 FAIL [embedded] no result in run " + RUN
        + ": ATest's record is from run 20261201T080000Z"), r.output);
    assertTrue(r.output.contains("STALE T-01@embedded from run 20261201T080000Z"), r.output);
    assertTrue(r.file.startsWith("# flashsale evidence: run " + RUN + ", commit " + COMMIT + " (tree clean), "), r.file);
    assertTrue(r.output.contains("SUMMARY passed=3 failed=1"), "only this run's assertions count: " + r.output);
  }

  @Test
  void disabledAndSkippedTestsAreListedAndAnAssumptionSkipFails() throws Exception {
    Path src = sources();
    Files.writeString(src.resolve("io/flashsale/evidence/DTest.java"), "@Disabled(\"the channel's v2 API\")\n"
        + "class DTest {\n  static final Evidence ev = " + evidence("T-04") + ";\n}\n");
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true);
    result(results, "T-03", "embedded", true);
    Path units = Files.createDirectories(tmp.resolve("api-reports"));
    Files.writeString(units.resolve("TEST-io.flashsale.api.LaterTest.xml"), "<?xml version=\"1.0\"?>\n"
        + "<testsuite name=\"io.flashsale.api.LaterTest\" tests=\"1\" errors=\"0\" skipped=\"1\" failures=\"0\">\n"
        + "<testcase name=\"later\" classname=\"io.flashsale.api.LaterTest\"><skipped message=\"waits for v2\"/></testcase>\n");
    Run listed = summary(List.of(src), results, List.of("embedded"), List.of(units));
    assertEquals(0, listed.exit, listed.output);
    assertTrue(listed.output.contains("DISABLED T-04 DTest: the channel's v2 API"), listed.output);
    assertTrue(listed.output.contains("SKIPPED LaterTest [unit]: waits for v2"), listed.output);
    assertTrue(listed.file.contains("== not run: "), listed.file);

    // a module's test that needs a real component and skipped without it: a FAIL, never a quiet skip
    Files.writeString(units.resolve("TEST-io.flashsale.api.ChromiumTest.xml"), "<?xml version=\"1.0\"?>\n"
        + "<testsuite name=\"io.flashsale.api.ChromiumTest\" tests=\"1\" errors=\"0\" skipped=\"1\" failures=\"0\">\n"
        + "<testcase name=\"ui\" classname=\"io.flashsale.api.ChromiumTest\">\n"
        + "<skipped message=\"Assumption failed: no chromium\"/></testcase>\n");
    Run skipped = summary(List.of(src), results, List.of("embedded"), List.of(units));
    assertEquals(1, skipped.exit, skipped.output);
    assertTrue(skipped.output.contains("RESULT ChromiumTest FAIL [unit] skipped by an assumption (Assumption failed: no chromium)"),
        skipped.output);
  }

  @Test
  void onlyThisRunsArtefactsArePublishedAndTheTreeKeepsNoStaleOnes() throws Exception {
    Path src = sources();
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true);
    result(results, "T-03", "embedded", true);
    Path made = tmp.resolve("made");
    artefact(made.resolve("webui"), RUN, "T-01 [embedded]", "shot.png", "png bytes");
    Path tree = Files.createDirectories(tmp.resolve("tree"));
    artefact(tree.resolve("schemathesis"), "20261130T140218Z", "T-03 [embedded]", "summary.txt", "an old fuzz");

    Run r = summary(List.of(src), results, List.of("embedded"), List.of(), "--made", made.toString(),
        "--publish", tree.toString());
    assertEquals(0, r.exit, r.output);
    assertTrue(r.output.contains("ARTEFACT webui T-01 [embedded] run " + RUN + ": 1 file(s), published"), r.output);
    assertEquals("png bytes", Files.readString(tree.resolve("webui/shot.png")));
    assertTrue(Files.readString(tree.resolve("webui/manifest.txt")).startsWith("RUN " + RUN + " "));
    assertFalse(Files.exists(tree.resolve("schemathesis")), "not made by this run: removed, not left stale");
    assertEquals(r.file, Files.readString(tree.resolve("output.txt")));

    // an experiment of this run whose artefact is older did not write what it reports
    artefact(made.resolve("schemathesis"), "20261130T140218Z", "T-03 [embedded]", "summary.txt", "an old fuzz");
    Run stale = summary(List.of(src), results, List.of("embedded"), List.of(), "--made", made.toString(),
        "--publish", tree.toString());
    assertEquals(1, stale.exit, stale.output);
    assertTrue(stale.output.contains("ARTEFACT schemathesis T-03 [embedded] stale: made by run 20261130T140218Z"), stale.output);
    assertTrue(stale.output.contains("RESULT T-03 FAIL [embedded] its artefact schemathesis is from run 20261130T140218Z"),
        stale.output);
    assertFalse(Files.exists(tree.resolve("schemathesis")), stale.output);

    // a file that is not the one its manifest names
    Files.writeString(made.resolve("webui/shot.png"), "another picture");
    Run tampered = summary(List.of(src), results, List.of("embedded"), List.of(), "--made", made.toString());
    assertTrue(tampered.output.contains("RESULT T-01 FAIL [embedded] artefact webui/shot.png missing or not the file"),
        tampered.output);
  }

  @Test
  void theCheckTellsArtefactsOfOneRunOfHeadsCodeFromStaleOnes() throws Exception {
    Path repo = Files.createDirectories(tmp.resolve("repo"));
    git(repo, "init", "-q");
    Files.writeString(repo.resolve("Code.java"), "class Code {}\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "code");
    String commit = git(repo, "rev-parse", "HEAD").strip();

    Path src = sources();
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true, RUN, commit);
    result(results, "T-03", "embedded", true, RUN, commit);
    Path made = tmp.resolve("made");
    artefact(made.resolve("webui"), RUN + " commit=" + commit, "T-01 [embedded]", "shot.png", "png bytes");
    Path published = repo.resolve("evidence");
    Run run = summary(List.of(src), results, List.of("embedded"), List.of(), "--made", made.toString(),
        "--publish", published.toString());
    assertEquals(0, run.exit, run.output);
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "evidence");

    Run fresh = check(published, src, "embedded");
    assertEquals(0, fresh.exit, fresh.output);
    assertTrue(fresh.output.contains("CHECK ok   HEAD has the code of commit " + commit), fresh.output);
    assertTrue(fresh.output.contains("CHECK ok   output.txt: SUMMARY passed=6 failed=0"), fresh.output);

    // a screenshot of another run put next to this run's output
    artefact(published.resolve("webui"), "20261130T140218Z commit=" + commit, "T-01 [embedded]", "shot.png", "old");
    Run mixed = check(published, src, "embedded");
    assertEquals(1, mixed.exit, mixed.output);
    assertTrue(mixed.output.contains("CHECK FAIL webui: its manifest names run/commit '20261130T140218Z " + commit + "'"),
        mixed.output);
    git(repo, "checkout", "-q", "--", ".");

    // the code moved on after the run
    Files.writeString(repo.resolve("Code.java"), "class Code { int changed; }\n");
    git(repo, "commit", "-q", "-am", "more code");
    Run moved = check(published, src, "embedded");
    assertEquals(1, moved.exit, moved.output);
    assertTrue(moved.output.contains("CHECK FAIL the code changed since run " + RUN + "'s commit " + commit
        + ": 1 file(s), e.g. Code.java"), moved.output);

    // today's committed artefacts: an output.txt written before runs were stamped
    Files.writeString(published.resolve("output.txt"), "# flashsale evidence: 2026-12-01T05:14:40Z, 2 cores\n");
    Run unstamped = check(published, src, "embedded");
    assertEquals(1, unstamped.exit, unstamped.output);
    assertTrue(unstamped.output.contains("names no run and commit"), unstamped.output);
  }

  // ---- the check recounts output.txt: each hand-edit of a valid report is a CHECK FAIL

  @Test
  void theCheckPassesAnUntouchedReportOfBothEngines() throws Exception {
    Published p = published();
    Run r = check(p.dir, p.src, "embedded", "dev-server");
    assertEquals(0, r.exit, r.output);
    assertTrue(r.output.contains("CHECK ok   output.txt: 4 RESULT lines, each PASS in its own section without a FAIL line;"
        + " embedded 2 of 2 expected by the sources, dev-server 2 of 2 expected by the sources,"
        + " SUMMARY and NOTRUN agree with the lines"), r.output);
    assertFalse(r.output.contains("CHECK FAIL"), r.output);
  }

  @Test
  void aResultTurnedToFailIsCaught() throws Exception {
    Published p = published();
    Run r = p.checkEdited(p.report.replace("RESULT T-01 PASS [embedded] title", "RESULT T-01 FAIL [embedded] title"));
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: RESULT T-01 FAIL [embedded] title: a failed experiment in the"
        + " committed evidence"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: SUMMARY passed=12 failed=0: the report has 1 RESULT FAIL line(s)"),
        r.output);
  }

  @Test
  void aResultFailEditedInIsCaught() throws Exception {
    Published p = published();
    Run r = p.checkEdited(p.report.replace("ENGINE embedded", "RESULT T-02 FAIL [dev-server] no result: BTest did not run\n"
        + "ENGINE embedded"));
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: RESULT T-02 FAIL [dev-server] no result: BTest did not run: a failed"
        + " experiment in the committed evidence"), r.output);
    assertTrue(r.output.contains("the report has 1 RESULT FAIL line(s)"), r.output);
  }

  @Test
  void aDeletedResultLineIsCaught() throws Exception {
    Published p = published();
    Run r = p.checkEdited(p.report.replace("RESULT T-03 PASS [embedded] title\n", ""));
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: section T-03 [embedded] has no RESULT line"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: ENGINE embedded experiments=2 expected=2: the report has 1 RESULT"
        + " line(s) on embedded"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: embedded: 1 experiment(s) the sources expect on it have no RESULT"
        + " in a section: T-03"), r.output);
  }

  @Test
  void aResultWithoutItsSectionIsCaught() throws Exception {
    Published p = published();
    Run r = p.checkEdited(p.report.replace("ENGINE embedded", "RESULT T-05 PASS [embedded] title\nENGINE embedded"));
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: RESULT T-05 PASS [embedded] title: no section of its own"), r.output);
  }

  @Test
  void aFailLineUnderAPassIsCaught() throws Exception {
    Published p = published();
    int at = p.report.indexOf("== T-02 [dev-server]");
    Run r = p.checkEdited(p.report.substring(0, at)
        + p.report.substring(at).replaceFirst("ok   two\n", "FAIL two (expected 1, got 2)\n"));
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: RESULT T-02 PASS [dev-server] title but its section has 1 FAIL"
        + " line(s), e.g. \"FAIL two (expected 1, got 2)\""), r.output);
  }

  @Test
  void theDevServerHalfDeletedIsCaught() throws Exception {
    Published p = published();
    String cut = withoutDevServerSections(p.report);
    assertFalse(cut.contains("RESULT T-02"), cut);
    Run r = p.checkEdited(cut); // SUMMARY, ENGINE and ARTEFACT lines left as they were
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK ok   output.txt: SUMMARY passed=12 failed=0"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: ENGINE dev-server experiments=2 expected=2: the report has 0 RESULT"
        + " line(s) on dev-server"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: dev-server: 2 experiment(s) the sources expect on it have no RESULT"
        + " in a section: T-01 T-02"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: ARTEFACT webui is published as T-02 [dev-server]'s, which has no"
        + " RESULT PASS here"), r.output);
  }

  @Test
  void anEngineCountChangedIsCaught() throws Exception {
    Published p = published();
    Run r = p.checkEdited(p.report.replace("ENGINE embedded experiments=2 expected=2", "ENGINE embedded experiments=3 expected=3"));
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: ENGINE embedded experiments=3 expected=3: the report has 2 RESULT"
        + " line(s) on embedded"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: ENGINE embedded experiments=3 expected=3: the sources expect 2"
        + " experiment(s) on embedded"), r.output);
  }

  @Test
  void countsEditedToAgreeWithADeletionStillMissTheSourcesExperiments() throws Exception {
    Published p = published();
    // made to look like a run of the in-memory engine alone: every count agrees with the lines left
    String cut = withoutDevServerSections(p.report)
        .replace("ENGINE dev-server experiments=2 expected=2", "ENGINE dev-server experiments=0 expected=0")
        .replaceAll("ARTEFACT webui [^\n]*\n", "ARTEFACT webui none made by run " + RUN + "\n")
        .replaceAll("SKIPPED T-03 \\[dev-server\\][^\n]*\n", "")
        .replace("NOTRUN disabled=1 skipped=2", "NOTRUN disabled=1 skipped=1")
        .replace("SUMMARY passed=12 failed=0", "SUMMARY passed=6 failed=0");
    Files.writeString(p.dir.resolve("output.txt"), cut);
    deleteTree(p.dir.resolve("webui"));
    Run r = check(p.dir, p.src, "embedded", "dev-server");
    assertEquals(1, r.exit, r.output);
    assertTrue(r.output.contains("CHECK ok   output.txt: SUMMARY passed=6 failed=0"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: ENGINE dev-server experiments=0 expected=0: the sources expect 2"
        + " experiment(s) on dev-server"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: dev-server: 2 experiment(s) the sources expect on it have no RESULT"
        + " in a section: T-01 T-02"), r.output);
    assertTrue(r.output.contains("CHECK FAIL output.txt: 1 experiment(s) the sources disable or exclude from an engine by a"
        + " tag are not listed as not run: T-03[dev-server]"), r.output);
    assertFalse(r.output.contains("CHECK FAIL output.txt: SUMMARY"), "the counts agree with each other: " + r.output);

    // the same with the dev server's ENGINE line gone too
    Files.writeString(p.dir.resolve("output.txt"), cut.replace("ENGINE dev-server experiments=0 expected=0\n", ""));
    Run gone = check(p.dir, p.src, "embedded", "dev-server");
    assertEquals(1, gone.exit, gone.output);
    assertTrue(gone.output.contains("CHECK FAIL output.txt: no ENGINE line for dev-server (the sources expect 2"
        + " experiment(s) on it)"), gone.output);
  }

  @Test
  void aRecordsPartsStandInItsSection() throws Exception {
    // PBT-01's safeguard-off controls: a RESULT <id>/<name> PASS in the record of <id>
    Published p = published(
        "RESULT T-01/SAFEGUARD-off PASS [embedded] caught: sequence 3 broke a property with the safeguard off\n");
    assertTrue(p.report.contains("RESULT T-01 PASS [embedded] title\nRESULT T-01/SAFEGUARD-off PASS [embedded] caught"),
        p.report);
    Run r = check(p.dir, p.src, "embedded", "dev-server");
    assertEquals(0, r.exit, r.output);
    assertTrue(r.output.contains("CHECK ok   output.txt: 5 RESULT lines, each PASS in its own section"), r.output);
  }

  /** The report's records of the dev server, each from its == line to its RESULT line and the blank line after. */
  private static String withoutDevServerSections(String report) {
    return report.replaceAll("(?ms)^== \\S+ \\[dev-server\\] .*?^RESULT \\S+ \\S+ \\[dev-server\\] [^\n]*\n\n", "");
  }

  /**
   * A report of both engines published into a git repository and committed with its code, as
   * ./flashsale evidence leaves it: T-01 on both engines, T-02 on the dev server only (with a
   * webui artefact, like X-10), T-03 on the in-memory engine only, T-04 disabled.
   */
  private Published published(String... moreOfT01Embedded) throws Exception {
    Path repo = Files.createDirectories(tmp.resolve("repo"));
    git(repo, "init", "-q");
    Files.writeString(repo.resolve("Code.java"), "class Code {}\n");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "code");
    String commit = git(repo, "rev-parse", "HEAD").strip();
    Path src = sources();
    Path results = Files.createDirectories(tmp.resolve("results"));
    result(results, "T-01", "embedded", true, RUN, commit);
    for (String more : moreOfT01Embedded) {
      Path f = results.resolve("T-01@embedded.txt");
      String record = Files.readString(f);
      int end = record.indexOf("ASSERTIONS ");
      Files.writeString(f, record.substring(0, end) + more + record.substring(end));
    }
    result(results, "T-01", "dev-server", true, RUN, commit);
    result(results, "T-02", "dev-server", true, RUN, commit);
    result(results, "T-03", "embedded", true, RUN, commit);
    Path made = tmp.resolve("made");
    artefact(made.resolve("webui"), RUN + " commit=" + commit, "T-02 [dev-server]", "shot.png", "png bytes");
    Path dir = repo.resolve("evidence");
    Run run = summary(List.of(src), results, List.of("embedded", "dev-server"), List.of(), "--made", made.toString(),
        "--publish", dir.toString());
    assertEquals(0, run.exit, run.output);
    assertTrue(run.file.endsWith("ENGINE embedded experiments=" + (2 + moreOfT01Embedded.length) + " expected=2\n"
        + "ENGINE dev-server experiments=2 expected=2\nNOTRUN disabled=1 skipped=2\nSUMMARY passed=12 failed=0\n"), run.file);
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "evidence");
    return new Published(dir, src, run.file);
  }

  private final class Published {
    final Path dir;
    final Path src;
    final String report;

    Published(Path dir, Path src, String report) {
      this.dir = dir;
      this.src = src;
      this.report = report;
    }

    /** The check of this evidence with output.txt replaced by an edited copy (the commit is untouched). */
    Run checkEdited(String edited) throws Exception {
      assertFalse(edited.equals(report), "the edit changed nothing");
      Files.writeString(dir.resolve("output.txt"), edited);
      return check(dir, src, "embedded", "dev-server");
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var files = Files.walk(dir)) {
      for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(f);
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

  static final String RUN = "20261201T210000Z";
  static final String COMMIT = "0123456789abcdef0123456789abcdef01234567";

  /** A result file as Evidence writes it, with three assertions, of this run. */
  private static void result(Path dir, String id, String engine, boolean pass) throws IOException {
    result(dir, id, engine, pass, RUN);
  }

  private static void result(Path dir, String id, String engine, boolean pass, String run) throws IOException {
    result(dir, id, engine, pass, run, COMMIT);
  }

  private static void result(Path dir, String id, String engine, boolean pass, String run, String commit)
      throws IOException {
    String verdict = pass ? "PASS" : "FAIL";
    Files.writeString(dir.resolve(id + "@" + engine + ".txt"), "== " + id + " [" + engine + "] title\n"
        + "ok   one\nok   two\nok   three\nRESULT " + id + " " + verdict + " [" + engine + "] title\n"
        + "ASSERTIONS passed=3 failed=" + (pass ? 0 : 1) + "\nRUN " + run + " commit=" + commit + " tree=clean\n");
  }

  /** An artefact folder as RunStamp.writeManifest leaves it; {@code run} may carry "commit=..." already. */
  private static void artefact(Path dir, String run, String experiment, String file, String content) throws Exception {
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(file), content);
    String stamp = run.contains(" commit=") ? run : run + " commit=" + COMMIT;
    String sum = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
        .digest(content.getBytes(StandardCharsets.UTF_8)));
    Files.writeString(dir.resolve("manifest.txt"), "RUN " + stamp + " tree=clean\nEXPERIMENT " + experiment
        + "\nFILE " + file + " sha256=" + sum + "\n");
  }

  private record Run(int exit, String output, String file) {}

  private Run summary(Path sources, Path results, String... engines) throws Exception {
    return summary(List.of(sources), results, List.of(engines), List.of());
  }

  private Run summary(List<Path> sources, Path results, List<String> engines, List<Path> unitReports, String... more)
      throws Exception {
    Path out = tmp.resolve("output-" + System.nanoTime() + ".txt");
    List<String> cmd = new ArrayList<>(List.of("bash", Path.of("summary.sh").toAbsolutePath().toString()));
    for (Path s : sources) cmd.addAll(List.of("--sources", s.toAbsolutePath().toString()));
    cmd.addAll(List.of("--results", results.toString(), "--reports", tmp.resolve("reports").toString(),
        "--out", out.toString()));
    // never the real modules' reports, nor the real target/ artefacts
    cmd.addAll(List.of("--unit-reports", tmp.resolve("no-unit-reports").toString()));
    for (Path u : unitReports) cmd.addAll(List.of("--unit-reports", u.toString()));
    if (!List.of(more).contains("--made")) cmd.addAll(List.of("--made", tmp.resolve("nothing-made").toString()));
    cmd.addAll(List.of(more));
    cmd.addAll(engines);
    return exec(cmd, out);
  }

  /** The check of {@code dir} against the experiments {@code sources} expect on {@code engines}. */
  private Run check(Path dir, Path sources, String... engines) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("bash", Path.of("summary.sh").toAbsolutePath().toString(),
        "--check", dir.toString(), "--sources", sources.toAbsolutePath().toString()));
    cmd.addAll(List.of(engines));
    return exec(cmd, null);
  }

  private static Run exec(List<String> cmd, Path out) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int exit = p.waitFor();
    return new Run(exit, output, out != null && Files.exists(out) ? Files.readString(out) : "");
  }

  private static String git(Path repo, String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("git", "-C", repo.toString(), "-c", "user.name=evidence",
        "-c", "user.email=evidence@localhost", "-c", "commit.gpgsign=false"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, p.waitFor(), "git " + String.join(" ", args) + ": " + output);
    return output;
  }
}
