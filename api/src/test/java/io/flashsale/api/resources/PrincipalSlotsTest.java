package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.api.auth.Caller;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One token cannot take every slot: a share per principal under the global cap. */
class PrincipalSlotsTest {
  private static final Caller ALICE = new Caller("t1", "alice", Long.MAX_VALUE);
  private static final Caller ALICE_ELSEWHERE = new Caller("t2", "alice", Long.MAX_VALUE);
  private static final Caller BOB = new Caller("t1", "bob", Long.MAX_VALUE);

  @Test
  void aPrincipalAtItsShareIsRefusedWhileOthersAreServed() {
    PrincipalSlots slots = new PrincipalSlots(4, 2);
    PrincipalSlots.Slot a1 = slots.tryAcquire(ALICE);
    PrincipalSlots.Slot a2 = slots.tryAcquire(ALICE);
    assertTrue(a1.held() && a2.held());
    assertEquals(PrincipalSlots.Refusal.PRINCIPAL_FULL, slots.tryAcquire(ALICE).refusal(), "alice's third");
    assertEquals(2, slots.inUse(), "a refused principal gives the global slot back");
    assertTrue(slots.tryAcquire(ALICE_ELSEWHERE).held(), "the same subject in another tenant is another principal");
    assertTrue(slots.tryAcquire(BOB).held(), "bob is served");
    assertEquals(PrincipalSlots.Refusal.SERVICE_FULL, slots.tryAcquire(BOB).refusal(), "the global cap comes first");
    a1.release();
    a1.release(); // a second release gives nothing back twice
    assertEquals(3, slots.inUse());
    assertTrue(slots.tryAcquire(ALICE).held(), "alice's released slot is hers again");
    assertEquals(PrincipalSlots.Refusal.SERVICE_FULL, slots.tryAcquire(ALICE).refusal());
  }

  @Test
  void releasedSlotsLeaveNothingBehind() {
    PrincipalSlots slots = new PrincipalSlots(3, 1);
    List<PrincipalSlots.Slot> held = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      PrincipalSlots.Slot s = slots.tryAcquire(new Caller("t1", "user-" + i, Long.MAX_VALUE));
      if (s.held()) held.add(s);
      if (held.size() == 3) {
        held.forEach(PrincipalSlots.Slot::release);
        held.clear();
      }
    }
    held.forEach(PrincipalSlots.Slot::release);
    assertEquals(0, slots.inUse());
  }
}
