package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The admission bound follows the engine's completion rate x the budget, within its floor and max. */
class CreateAdmissionTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);

  @Test
  void aColdServiceAdmitsItsFloorAndRefusesTheRestAtOnce() {
    CreateAdmission a = new CreateAdmission(4, 100, 1_000, now::get);
    for (int i = 0; i < 4; i++) assertTrue(a.tryAdmit());
    assertFalse(a.tryAdmit(), "no rate measured yet: the floor is the bound");
    assertEquals(4, a.inFlight());
    a.done(true);
    assertTrue(a.underLoad(), "just refused");
    assertTrue(a.tryAdmit(), "a finished create frees its place: a floor of 4 is its own floor under load too");
    assertFalse(a.tryAdmit());
    CreateAdmission two = new CreateAdmission(2, 2, 1_000, now::get);
    assertTrue(two.tryAdmit());
    assertTrue(two.tryAdmit());
    assertFalse(two.tryAdmit());
    assertEquals(2, two.bound(), "a bound of 2 keeps 2 under load: its places never race their answers");
  }

  @Test
  void aServiceThatRefusesFollowsTheEngineBelowItsFloor() {
    CreateAdmission a = new CreateAdmission(64, 256, 1_000, now::get);
    // 20 completions/s for two seconds, never 64 at once: the floor holds, the rate measures demand
    completeOneByOne(a, 40, 50_000_000L);
    assertEquals(64, a.bound(), "quiet: a burst of the floor is admitted");
    for (int i = 0; i < 64; i++) assertTrue(a.tryAdmit());
    assertFalse(a.tryAdmit(), "the 65th is refused");
    assertTrue(a.underLoad());
    int loaded = a.bound();
    assertTrue(loaded >= 18 && loaded <= 21, "refusing: the bound is the engine's 20/s x 1 s, below the floor, got " + loaded);
    for (int i = 0; i < 64; i++) a.done(false); // the engine stopped answering: no completions
    now.addAndGet(CreateAdmission.WINDOW_NANOS + 1);
    assertFalse(a.underLoad());
    assertEquals(64, a.bound(), "a window without a refusal: the floor again");
    for (int i = 0; i < 64; i++) assertTrue(a.tryAdmit());
    assertFalse(a.tryAdmit());
    assertEquals(16, a.bound(), "refusing with no completion measured: a quarter of the floor, never nothing");
  }

  @Test
  void manyCreatesAnsweredPastTheirDeadlineSayTheQueueIsTooLongAFewSayTheEngineIsSlow() {
    CreateAdmission a = new CreateAdmission(64, 256, 1_000, now::get);
    // a cold engine's slow creates, 14 a window: a slow engine, not a queue; the floor holds
    for (int i = 0; i < 3 * 16; i++) {
      a.missedDeadline();
      now.addAndGet(CreateAdmission.WINDOW_NANOS / 14);
      assertFalse(a.underLoad(), "14 late answers a window is not under load (miss " + i + ")");
    }
    completeOneByOne(a, 40, 50_000_000L); // the engine finishes 20/s, never 64 at once: no refusal
    assertEquals(64, a.bound());
    // 64 closed-loop clients: never refused, but a quarter of the floor of them past the deadline at once
    for (int i = 0; i < 15; i++) a.missedDeadline();
    assertFalse(a.underLoad());
    a.missedDeadline();
    assertTrue(a.underLoad(), "16 late answers within a window");
    int bound = a.bound();
    assertTrue(bound >= 18 && bound <= 21, "the engine's 20/s x 1 s rules, got " + bound);
    now.addAndGet(CreateAdmission.WINDOW_NANOS + 1);
    assertEquals(64, a.bound(), "a window later, with no overload: the floor");
  }

  @Test
  void theBoundIsTheCompletionRateTimesTheBudget() {
    CreateAdmission a = new CreateAdmission(4, 1_000, 500, now::get);
    // 100 completions/s for two seconds: 200 within the window
    completeOneByOne(a, 200, 10_000_000L);
    assertEquals(100, a.completionsPerSecond(), 10);
    int bound = a.bound();
    assertTrue(bound >= 45 && bound <= 55, "100/s x 0.5 s = 50, got " + bound);
    for (int i = 0; i < bound; i++) assertTrue(a.tryAdmit());
    assertFalse(a.tryAdmit(), "past rate x budget: refused");
  }

  @Test
  void failuresDoNotCountAsCompletionsAndTheRateAgesOut() {
    CreateAdmission a = new CreateAdmission(2, 1_000, 1_000, now::get);
    for (int i = 0; i < 50; i++) {
      a.tryAdmit();
      a.done(false); // the engine did not answer: no evidence it can take more
    }
    assertEquals(2, a.bound());
    for (int i = 0; i < 50; i++) {
      a.tryAdmit();
      a.done(true);
    }
    assertEquals(25, a.bound(), "50 in the 2 s window = 25/s x 1 s");
    now.addAndGet(CreateAdmission.WINDOW_NANOS + 1);
    assertEquals(2, a.bound(), "a window later the rate is gone: back to the floor");
  }

  @Test
  void theMaxCapsTheBoundAndAFixedAdmissionIsItsMax() {
    CreateAdmission a = new CreateAdmission(2, 10, 1_000, now::get);
    for (int i = 0; i < 500; i++) {
      a.tryAdmit();
      a.done(true);
    }
    assertEquals(10, a.bound());
    CreateAdmission fixed = CreateAdmission.fixed(3);
    assertEquals(3, fixed.bound());
    assertEquals(0, CreateAdmission.fixed(0).bound(), "0: every create refused");
  }

  @Test
  void aPrincipalAtItsShareIsRefusedWhileOthersAreAdmittedAndTheBoundComesFirst() {
    CreateAdmission a = new CreateAdmission(4, 4, 0, 2, now::get);
    io.flashsale.api.auth.Caller one = new io.flashsale.api.auth.Caller("t1", "user-1");
    io.flashsale.api.auth.Caller other = new io.flashsale.api.auth.Caller("t1", "user-2");
    assertEquals(CreateAdmission.Admission.ADMITTED, a.tryAdmit(one));
    assertEquals(CreateAdmission.Admission.ADMITTED, a.tryAdmit(one));
    assertEquals(CreateAdmission.Admission.PRINCIPAL_SHARE_USED, a.tryAdmit(one), "its share is 2");
    assertEquals(2, a.inFlight(), "a refusal holds no place");
    assertEquals(CreateAdmission.Admission.ADMITTED, a.tryAdmit(other), "another principal is still admitted");
    assertEquals(CreateAdmission.Admission.ADMITTED, a.tryAdmit(other));
    assertEquals(CreateAdmission.Admission.OVERLOADED, a.tryAdmit(new io.flashsale.api.auth.Caller("t1", "user-3")),
        "the bound is reached: 503 before any share is looked at");
    a.done(one, true);
    assertEquals(CreateAdmission.Admission.ADMITTED, a.tryAdmit(one), "a finished create frees its share's place");
    assertEquals(CreateAdmission.Admission.OVERLOADED, a.tryAdmit(one));
  }

  /** {@code count} creates admitted and answered one at a time, {@code nanosApart} apart: a rate of 1e9 / nanosApart. */
  private void completeOneByOne(CreateAdmission a, int count, long nanosApart) {
    for (int i = 0; i < count; i++) {
      assertTrue(a.tryAdmit());
      now.addAndGet(nanosApart);
      a.done(true);
    }
  }
}
