package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.CreateOutcome;
import io.flashsale.domain.CreateResult;
import io.flashsale.domain.OrderStatus;
import io.flashsale.domain.OrderView;
import io.flashsale.domain.Transition;
import io.flashsale.workflows.CommandRefusals.Command;
import io.flashsale.workflows.CommandRefusals.RunFacts;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The command refusals as plain functions of the run's state: no engine, no workflow. */
class CommandRefusalsTest {
  private static OrderView order(OrderStatus status, int version) {
    return new OrderView("ord-000000000001", "t1", "user-1", "sku-1", 1, 1_000, status, version, "rk-1");
  }

  /** A fresh run holding this order, no command accepted, no workflow cancel. */
  private static RunFacts holding(OrderView order, Command accepted) {
    return new RunFacts(order, false, true, true, false, accepted, false);
  }

  private static CommandResult rejected(OrderStatus shown, int version) {
    return new CommandResult(CommandOutcome.REJECTED, shown, version);
  }

  private static final CommandResult REJECTED_NO_ORDER = new CommandResult(CommandOutcome.REJECTED, null, 0);

  @Test
  void aPayRunsOnlyOnACreatedOrderWithNoCommandAcceptedAndNoWorkflowCancel() {
    assertNull(CommandRefusals.pay(holding(order(OrderStatus.CREATED, 1), null)));
    for (OrderStatus status : OrderStatus.values()) {
      if (status == OrderStatus.CREATED) continue;
      assertEquals(rejected(status, 3), CommandRefusals.pay(holding(order(status, 3), null)), status.name());
    }
    // a second command: the status shown is where the accepted one takes the order
    assertEquals(rejected(OrderStatus.PAYING, 1), CommandRefusals.pay(holding(order(OrderStatus.CREATED, 1), Command.PAY)));
    assertEquals(rejected(OrderStatus.CANCELLED, 1),
        CommandRefusals.pay(holding(order(OrderStatus.CREATED, 1), Command.CANCEL)));
    RunFacts cancelPending = new RunFacts(order(OrderStatus.CREATED, 1), false, true, true, false, null, true);
    assertEquals(rejected(OrderStatus.CREATED, 1), CommandRefusals.pay(cancelPending));
  }

  @Test
  void aCancelRunsOnACreatedOrderAndAnswersACancelledOneAsAReplay() {
    assertNull(CommandRefusals.cancel(holding(order(OrderStatus.CREATED, 1), null)));
    assertEquals(new CommandResult(CommandOutcome.REPLAY_CANCEL, OrderStatus.CANCELLED, 2),
        CommandRefusals.cancel(holding(order(OrderStatus.CANCELLED, 2), null)));
    assertEquals(new CommandResult(CommandOutcome.REPLAY_CANCEL, OrderStatus.CANCELLED, 2),
        CommandRefusals.cancel(holding(order(OrderStatus.CANCELLED, 2), Command.PAY)));
    for (OrderStatus status : List.of(OrderStatus.PAYING, OrderStatus.UNKNOWN, OrderStatus.PAID, OrderStatus.FAILED,
        OrderStatus.REFUNDING, OrderStatus.REFUNDED)) {
      assertEquals(rejected(status, 4), CommandRefusals.cancel(holding(order(status, 4), null)), status.name());
    }
    assertEquals(rejected(OrderStatus.PAYING, 1),
        CommandRefusals.cancel(holding(order(OrderStatus.CREATED, 1), Command.PAY)));
    // a cancel in flight: the handler waits for it and answers, so it is not refused
    assertNull(CommandRefusals.cancel(holding(order(OrderStatus.CREATED, 1), Command.CANCEL)));
    // a workflow cancel pending does not refuse a buyer's cancel: both cancel the order
    assertNull(CommandRefusals.cancel(new RunFacts(order(OrderStatus.CREATED, 1), false, true, true, false, null, true)));
  }

  @Test
  void withoutAnOrderACommandWaitsWhileOneMayComeAndIsRefusedOnceNoneCan() {
    // loading its order (started with an order id): wait, whatever else holds
    RunFacts loading = new RunFacts(null, true, false, false, true, null, true);
    assertTrue(loading.orderMayCome());
    assertNull(CommandRefusals.pay(loading));
    assertNull(CommandRefusals.cancel(loading));
    // a fresh run before any create settled, or with a create still reserving
    assertTrue(new RunFacts(null, false, false, false, false, null, false).orderMayCome());
    assertTrue(new RunFacts(null, false, true, false, false, null, false).orderMayCome());
    // a create that started after the bound gave up still makes the order
    assertTrue(new RunFacts(null, false, true, false, true, null, false).orderMayCome());
    // refused at once: a create settled without an order, no create within the bound, a workflow cancel
    for (RunFacts none : List.of(
        new RunFacts(null, false, true, true, false, null, false),
        new RunFacts(null, false, false, false, true, null, false),
        new RunFacts(null, false, true, false, false, null, true))) {
      assertFalse(none.orderMayCome(), none.toString());
      assertEquals(REJECTED_NO_ORDER, CommandRefusals.pay(none), none.toString());
      assertEquals(REJECTED_NO_ORDER, CommandRefusals.cancel(none), none.toString());
    }
  }

  @Test
  void aCancelThatRanIsAnsweredByTheOrdersStatusAfterIt() {
    assertEquals(new CommandResult(CommandOutcome.CANCELLED, OrderStatus.CANCELLED, 2),
        CommandRefusals.cancelled(order(OrderStatus.CANCELLED, 2), CommandOutcome.CANCELLED));
    assertEquals(new CommandResult(CommandOutcome.REPLAY_CANCEL, OrderStatus.CANCELLED, 2),
        CommandRefusals.cancelled(order(OrderStatus.CANCELLED, 2), CommandOutcome.REPLAY_CANCEL));
    // a notice or the expiry got there first
    assertEquals(rejected(OrderStatus.PAID, 3),
        CommandRefusals.cancelled(order(OrderStatus.PAID, 3), CommandOutcome.CANCELLED));
    assertEquals(rejected(OrderStatus.CANCELLED, 1),
        CommandRefusals.cancelled(order(OrderStatus.CREATED, 1), CommandOutcome.CANCELLED));
  }

  @Test
  void aCreateIsAnsweredAsAReplayOnceTheRunHoldsItsOrder() {
    OrderView created = order(OrderStatus.CREATED, 1);
    List<Transition> first = List.of();
    CreateResult made = new CreateResult(CreateOutcome.CREATED, created, first, "2026-12-05T00:00:00Z");
    assertSame(made, CommandRefusals.create(true, false, made));
    assertEquals(new CreateResult(CreateOutcome.REPLAY, created, List.of(), null),
        CommandRefusals.create(true, true, made));
    assertEquals(new CreateResult(CreateOutcome.REPLAY, created, List.of(), null),
        CommandRefusals.create(false, true, made));
  }

  @Test
  void aFreshRunTakesAReplayOfAVersionOneOrderAsItsOwnLostAttempt() {
    OrderView created = order(OrderStatus.CREATED, 1);
    CreateResult replay = new CreateResult(CreateOutcome.REPLAY, created, List.of(), "2026-12-05T00:00:00Z");
    assertEquals(new CreateResult(CreateOutcome.CREATED, created, List.of(), "2026-12-05T00:00:00Z"),
        CommandRefusals.create(true, false, replay));
    // not a fresh run (continue-as-new, repair, a late notice): it did not make the order
    assertSame(replay, CommandRefusals.create(false, false, replay));
    // the run already held it: a replay stays one
    assertSame(replay, CommandRefusals.create(true, true, replay));
    // a later version was written by a run that held it
    CreateResult paid = new CreateResult(CreateOutcome.REPLAY, order(OrderStatus.PAID, 3), List.of(), null);
    assertSame(paid, CommandRefusals.create(true, false, paid));
    // refusals carry no order and pass as they are
    for (CreateOutcome refused : List.of(CreateOutcome.SOLD_OUT, CreateOutcome.USER_LIMIT, CreateOutcome.KEY_REUSED,
        CreateOutcome.UNKNOWN_SKU)) {
      CreateResult r = new CreateResult(refused, null, List.of(), null);
      assertSame(r, CommandRefusals.create(true, false, r), refused.name());
      assertSame(r, CommandRefusals.create(true, true, r), refused.name());
    }
  }
}
