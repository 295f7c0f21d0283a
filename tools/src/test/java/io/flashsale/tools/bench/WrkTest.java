package io.flashsale.tools.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** wrk's answer as the script prints it, and the CPU bash's `times` gives for it. */
class WrkTest {
  @Test
  void readsTheResultLineAndTheChildrensCpu() {
    String out = "Running 10s test @ http://127.0.0.1:8081/ping\n  2 threads and 64 connections\n"
        + "WRK-RESULT 412345 412000 345 7 10.012 1.020 7.125 300 5\n"
        + "WRK-TIMES\n0m0.001s 0m0.002s\n0m3.250s 1m2.500s\n";
    Wrk.Result r = Wrk.parse(out).orElseThrow();
    assertEquals(412345, r.requests());
    assertEquals(412000, r.expectedStatus());
    assertEquals(345, r.otherStatus());
    assertEquals(7, r.socketErrors());
    assertEquals(300, r.busy(), "of the other answers, the 503s");
    assertEquals(5, r.past2s(), "answered after 2 s, or not within wrk's timeout");
    assertEquals(412000 / 10.012, r.rate(), 1e-6);
    assertEquals(7.125, r.p99Ms(), 1e-9);
    assertEquals(3.25 + 62.5, r.cpuSeconds(), 1e-9, "the children's user + system");
    assertTrue(Wrk.parse("wrk: command not found").isEmpty());
    assertTrue(Double.isNaN(Wrk.childCpuSeconds("WRK-RESULT 1 1 0 0 1.0 1.0 1.0 0 0\n")));
  }

  @Test
  void theScriptCountsTheExpectedStatusAndMakesEveryKeyFresh() {
    String lua = Wrk.script(null, 200);
    assertTrue(lua.contains("if status == 200 then ok = ok + 1"), lua);
    assertTrue(lua.contains("if status == 503 then busy = busy + 1"), "the 503s counted apart: " + lua);
    assertTrue(lua.contains("latency:percentile(p) > 2000000"), "the answers past 2 s from the histogram: " + lua);
    assertTrue(!lua.contains("function request()"), "a GET needs no request function: " + lua);
    String create = Wrk.script(new Wrk.Create(java.util.List.of("abc.DEF-12_3", "xyz.987"), "sku-1"), 409);
    assertTrue(create.contains("  'abc.DEF-12_3',\n  'xyz.987',\n}"), "every buyer's token: " + create);
    assertTrue(create.contains("'Bearer ' .. t"), create);
    assertTrue(create.contains("headers[(n + tid * 7919) % #headers + 1]"), "the buyers in turn: " + create);
    assertTrue(create.contains("prefix .. '-' .. n"), "a fresh key per request: " + create);
    assertThrows(IllegalArgumentException.class,
        () -> Wrk.script(new Wrk.Create(java.util.List.of("x'; os.exit() --"), "s"), 409));
    assertThrows(IllegalArgumentException.class, () -> new Wrk.Create(java.util.List.of(), "s"));
  }

  @Test
  void theCallbackScriptSendsEachSignedBodyInTurn() {
    String sig = "t=1700000000,v1=" + "ab".repeat(32);
    String lua = Wrk.callbackScript(java.util.List.of(
        new Wrk.SignedCallback("{\"notify_id\":\"ntf-1\",\"amount\":1990,\"txn\":null}", sig),
        new Wrk.SignedCallback("{\"notify_id\":\"ntf-2\"}", null)), 200);
    assertTrue(lua.contains("'{\"notify_id\":\"ntf-1\",\"amount\":1990,\"txn\":null}'"), lua);
    assertTrue(lua.contains("'" + sig + "'") && lua.contains("  '',\n"), "a signature per body, empty when unsigned: " + lua);
    assertTrue(lua.contains("if status == 200 then ok = ok + 1"), lua);
    assertThrows(IllegalArgumentException.class,
        () -> Wrk.callbackScript(java.util.List.of(new Wrk.SignedCallback("{}'); os.exit() --", null)), 200));
    assertThrows(IllegalArgumentException.class,
        () -> Wrk.callbackScript(java.util.List.of(new Wrk.SignedCallback("{}", "t=1,v1=x'")), 200));
  }

  @Test
  void theOnceScriptDealsTheListToTheThreadsAndStopsEachWhenItsShareIsSent() {
    String lua = Wrk.callbackOnceScript(java.util.List.of(new Wrk.SignedCallback("{\"notify_id\":\"ntf-1\"}", null),
        new Wrk.SignedCallback("{\"notify_id\":\"ntf-2\"}", null)), 200, 2);
    assertTrue(lua.contains("local i = tid + 1 + n * 2"), "thread tid takes entries tid+1, tid+3, ...: " + lua);
    assertTrue(lua.contains("if i > #formatted then\n    wrk.thread:stop()"), "stops once its share is sent: " + lua);
    assertTrue(lua.contains("'{\"notify_id\":\"ntf-2\"}'") && lua.contains("if status == 200 then ok = ok + 1"), lua);
  }
}
