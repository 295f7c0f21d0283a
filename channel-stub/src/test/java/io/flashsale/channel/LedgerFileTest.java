package io.flashsale.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.channel.StubClient.Resp;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The optional ledger file: a stub restarted on the same file knows exactly what it knew before. */
class LedgerFileTest {
  @TempDir
  Path dir;
  private final List<ChannelStub> started = new ArrayList<>();
  private CallbackReceiver receiver;

  @BeforeEach
  void startReceiver() throws Exception {
    receiver = new CallbackReceiver();
  }

  @AfterEach
  void stopAllStubs() {
    started.forEach(ChannelStub::stop);
    receiver.close();
  }

  private StubClient start(Path ledger) {
    ChannelStub stub = ChannelStub.start(settings().withLedger(ledger));
    started.add(stub);
    return new StubClient(stub.baseUrl(), "merchant-key");
  }

  private ChannelStub.Settings settings() {
    return ChannelStub.Settings.local("merchant-key", "s", java.util.Set.of(receiver.url()));
  }

  private void stopAll() {
    started.forEach(ChannelStub::stop);
    started.clear();
  }

  private Resp charge(StubClient c, String mo, long amount) throws Exception {
    return c.post("/charge", Map.of("merchant_order", mo, "amount", amount, "notify_url", receiver.url()));
  }

  private static Resp refund(StubClient c, String mo, String key, long amount) throws Exception {
    return c.post("/refund", Map.of("merchant_order", mo, "refund_key", key, "amount", amount), Duration.ofSeconds(5));
  }

  private static JsonNode rows(StubClient c) throws Exception {
    Resp r = c.get("/statement");
    assertEquals(200, r.status());
    return r.body().path("rows");
  }

  private static Map<String, JsonNode> queries(StubClient c, List<String> orders) throws Exception {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    for (String mo : orders) {
      Resp r = c.get("/charges/" + mo);
      assertEquals(200, r.status());
      out.put(mo, r.body());
    }
    return out;
  }

  private static List<String> ops(Path ledger) throws Exception {
    List<String> ops = new ArrayList<>();
    for (String line : Files.readAllLines(ledger, StandardCharsets.UTF_8)) {
      ops.add(Json.MAPPER.readTree(line).path("op").asText());
    }
    return ops;
  }

  @Test
  void restartOnTheSameFileChangesNothingAtTheBank() throws Exception {
    Path ledger = dir.resolve("bank/ledger.jsonl"); // the directory is created too
    StubClient a = start(ledger);

    assertEquals(200, a.post("/_faults", Map.of("merchant_order", "mo-declined", "decline", true)).status());
    Resp declined = charge(a, "mo-declined", 500);
    assertEquals("DECLINED", declined.body().path("result").asText());
    Resp charged = charge(a, "mo-charged", 1000);
    assertEquals("CHARGED", charged.body().path("result").asText());
    assertEquals("CLOSED", a.post("/close", Map.of("merchant_order", "mo-closed")).body().path("status").asText());
    assertEquals(409, charge(a, "mo-closed", 700).status());
    Resp refundedCharge = charge(a, "mo-refunded", 2500);
    Resp refunded = refund(a, "mo-refunded", "rk-1", 2500);
    assertEquals(200, refunded.status());
    String refundId = refunded.body().path("refund_id").asText();

    List<String> orders = List.of("mo-declined", "mo-charged", "mo-closed", "mo-refunded", "mo-unknown");
    JsonNode rowsBefore = rows(a);
    assertEquals(3, rowsBefore.size(), "CHARGE mo-charged, CHARGE mo-refunded, REFUND mo-refunded");
    Map<String, JsonNode> queriesBefore = queries(a, orders);
    assertEquals("REFUNDED", queriesBefore.get("mo-refunded").path("status").asText());
    assertEquals("NOT_FOUND", queriesBefore.get("mo-unknown").path("status").asText());
    Set<String> oldTxns = Set.of(declined.body().path("txn").asText(), charged.body().path("txn").asText(),
        refundedCharge.body().path("txn").asText());
    assertEquals(3, oldTxns.size());
    // all four callbacks (charge x3, refund) delivered before the restart; their ids must not come back
    receiver.await("mo-refunded", 2, 5_000);
    receiver.await("mo-charged", 1, 5_000);
    receiver.await("mo-declined", 1, 5_000);
    Set<String> oldNotifyIds = new HashSet<>();
    for (String mo : orders) {
      receiver.of(mo).forEach(cb -> oldNotifyIds.add(cb.json().path("notify_id").asText()));
    }
    assertEquals(4, oldNotifyIds.size());

    stopAll();
    StubClient b = start(ledger); // a new stub on (another) free port

    assertEquals(rowsBefore, rows(b));
    assertEquals(queriesBefore, queries(b, orders));
    // repeats answer as before: same result, same txn (the decline fault rule itself is gone, its effect is not)
    assertEquals(declined.body(), charge(b, "mo-declined", 500).body());
    assertEquals(charged.body(), charge(b, "mo-charged", 1000).body());
    assertEquals(refundedCharge.body(), charge(b, "mo-refunded", 2500).body());
    assertEquals(422, charge(b, "mo-charged", 999).status(), "amount is remembered");
    Resp closedAgain = charge(b, "mo-closed", 700);
    assertEquals(409, closedAgain.status());
    assertEquals("CLOSED", closedAgain.body().path("result").asText());
    JsonNode close = b.post("/close", Map.of("merchant_order", "mo-charged")).body();
    assertEquals("CHARGED", close.path("status").asText());
    assertEquals(charged.body().path("txn").asText(), close.path("txn").asText());
    // the refund key is remembered: same refund id, no new row; another key is refused
    Resp refundAgain = refund(b, "mo-refunded", "rk-1", 2500);
    assertEquals(200, refundAgain.status());
    assertEquals(refundId, refundAgain.body().path("refund_id").asText());
    assertEquals("ALREADY_REFUNDED_OTHER_KEY",
        refund(b, "mo-refunded", "rk-2", 2500).body().path("error").asText());
    assertEquals(rowsBefore, rows(b), "repeats add no rows");
    assertEquals(422, refund(b, "mo-charged", "rk-1", 1000).status(), "rk-1 belongs to mo-refunded");

    // new ids follow the old ones
    Resp fresh = charge(b, "mo-new", 300);
    assertEquals("CHARGED", fresh.body().path("result").asText());
    String newTxn = fresh.body().path("txn").asText();
    assertFalse(oldTxns.contains(newTxn), newTxn + " was used before the restart");
    assertEquals("txn-000004", newTxn);
    Resp newRefund = refund(b, "mo-charged", "rk-3", 1000);
    assertEquals(200, newRefund.status());
    assertNotEquals(refundId, newRefund.body().path("refund_id").asText());
    JsonNode rowsAfter = rows(b);
    assertEquals(5, rowsAfter.size());
    assertEquals(4, rowsAfter.get(3).path("seq").asLong());
    assertEquals(newTxn, rowsAfter.get(3).path("txn").asText());
    assertEquals(5, rowsAfter.get(4).path("seq").asLong());
    String newNotifyId = receiver.await("mo-new", 1, 5_000).get(0).json().path("notify_id").asText();
    assertFalse(oldNotifyIds.contains(newNotifyId), newNotifyId + " was used before the restart");

    // what the second stub added survives the next restart too
    stopAll();
    StubClient c = start(ledger);
    assertEquals(rowsAfter, rows(c));
    assertEquals("REFUNDED", c.get("/charges/mo-charged").body().path("status").asText());
    assertEquals(fresh.body(), charge(c, "mo-new", 300).body());
  }

  @Test
  void everyChangeIsInTheFileBeforeTheAnswerAndNothingElseIs() throws Exception {
    Path ledger = dir.resolve("ledger.jsonl");
    StubClient a = start(ledger);
    charge(a, "mo-1", 100);
    assertEquals(List.of("charge"), ops(ledger));
    charge(a, "mo-1", 100); // repeat
    charge(a, "mo-1", 5); // amount mismatch
    a.post("/close", Map.of("merchant_order", "mo-1")); // already charged: no change
    a.get("/charges/mo-1");
    a.get("/statement");
    refund(a, "nobody", "k0", 1); // refused
    assertEquals(List.of("charge"), ops(ledger));
    a.post("/close", Map.of("merchant_order", "mo-2"));
    assertEquals(List.of("charge", "close"), ops(ledger));
    refund(a, "mo-1", "k1", 100);
    refund(a, "mo-1", "k1", 100); // repeat
    assertEquals(List.of("charge", "close", "refund"), ops(ledger));
    a.post("/_reset", Map.of());
    assertEquals(List.of("charge", "close", "refund", "reset"), ops(ledger));

    JsonNode first = Json.MAPPER.readTree(Files.readAllLines(ledger).get(0));
    assertEquals("mo-1", first.path("mo").asText());
    assertEquals(100, first.path("amount").asLong());
    assertEquals("CHARGED", first.path("result").asText());
    assertEquals(receiver.url(), first.path("notify_url").asText());
  }

  @Test
  void resetIsDurableAndIdsKeepCountingAcrossIt() throws Exception {
    Path ledger = dir.resolve("ledger.jsonl");
    StubClient a = start(ledger);
    String oldTxn = charge(a, "mo-old", 100).body().path("txn").asText();
    refund(a, "mo-old", "rk", 100);
    a.post("/_reset", Map.of());
    String txn = charge(a, "mo-after", 200).body().path("txn").asText();
    JsonNode rows = rows(a);
    assertEquals(1, rows.size());
    assertEquals(1, rows.get(0).path("seq").asLong(), "row numbers restart after /_reset");

    stopAll();
    StubClient b = start(ledger);
    assertEquals(rows, rows(b));
    assertEquals("NOT_FOUND", b.get("/charges/mo-old").body().path("status").asText());
    assertEquals("CHARGED", b.get("/charges/mo-after").body().path("status").asText());
    String newTxn = charge(b, "mo-new", 300).body().path("txn").asText();
    assertFalse(Set.of(oldTxn, txn).contains(newTxn));
    assertEquals("txn-000003", newTxn);
    Resp refund = refund(b, "mo-new", "rk", 300); // the key was forgotten by the reset
    assertEquals(200, refund.status());
    assertEquals("rfd-000002", refund.body().path("refund_id").asText());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "{\"op\":\"charge\",\"mo\":\"mo-torn\",\"amo", // crash mid-line
      "{\"op\":\"charge\",\"mo\":\"mo-torn\"\u0000\u0000\u0000\n", // end of the line written, middle not
  })
  void tornLastLineIsIgnored(String torn) throws Exception {
    Path ledger = dir.resolve("ledger.jsonl");
    StubClient a = start(ledger);
    charge(a, "mo-1", 100);
    charge(a, "mo-2", 200);
    JsonNode rows = rows(a);
    stopAll();
    long goodLength = Files.size(ledger);
    Files.writeString(ledger, torn, StandardCharsets.UTF_8, StandardOpenOption.APPEND);

    StubClient b = start(ledger);
    assertEquals(rows, rows(b));
    assertEquals("NOT_FOUND", b.get("/charges/mo-torn").body().path("status").asText());
    assertEquals(goodLength, Files.size(ledger), "the torn line is cut off");
    Resp after = charge(b, "mo-3", 300);
    assertEquals("txn-000003", after.body().path("txn").asText());
    assertEquals(List.of("charge", "charge", "charge"), ops(ledger), "the next record is a whole line");

    stopAll();
    StubClient c = start(ledger);
    assertEquals(3, rows(c).size());
    assertEquals(after.body(), charge(c, "mo-3", 300).body());
  }

  @Test
  void damagedLineBeforeTheEndRefusesToStart() throws Exception {
    Path ledger = dir.resolve("ledger.jsonl");
    StubClient a = start(ledger);
    charge(a, "mo-1", 100);
    stopAll();
    List<String> lines = new ArrayList<>(Files.readAllLines(ledger));
    lines.add(0, "{\"op\":\"charge\",\"mo\":");
    Files.write(ledger, lines);

    IllegalStateException e = assertThrows(IllegalStateException.class, () -> start(ledger));
    assertTrue(e.getMessage().contains("line 1"), e.getMessage());
    // nothing was cut off a damaged file
    assertEquals(lines, Files.readAllLines(ledger));
  }

  @Test
  void inconsistentRecordRefusesToStart() throws Exception {
    Path ledger = dir.resolve("ledger.jsonl");
    Files.writeString(ledger, "{\"op\":\"refund\",\"mo\":\"mo-x\",\"amount\":1,\"txn\":\"txn-000001\","
        + "\"refund_key\":\"k\",\"refund_id\":\"rfd-000001\",\"row_seq\":1,\"at\":\"2025-01-01T00:00:00Z\"}\n");
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> start(ledger));
    assertTrue(e.getMessage().contains("mo-x"), e.getMessage());
  }

  @Test
  void oneFileOneStub() throws Exception {
    Path ledger = dir.resolve("ledger.jsonl");
    start(ledger);
    assertThrows(IllegalStateException.class, () -> ChannelStub.start(settings().withLedger(ledger)));
    stopAll();
    charge(start(ledger), "mo-1", 100); // usable again once the first stub stopped
    assertEquals(List.of("charge"), ops(ledger));
  }

  @Test
  void withoutFileNothingIsKept() throws Exception {
    StubClient a = start(null);
    charge(a, "mo-1", 100);
    stopAll();
    StubClient b = start(null);
    assertEquals(0, rows(b).size());
    assertEquals("txn-000001", charge(b, "mo-1", 100).body().path("txn").asText());
  }
}
