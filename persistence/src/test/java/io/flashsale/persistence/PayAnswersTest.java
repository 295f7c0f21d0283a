package io.flashsale.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.CommandOutcome;
import io.flashsale.domain.OrderStatus;
import io.flashsale.persistence.PayAnswers.Answer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * pay_answer on a real PostgreSQL: the first answer to a key is kept, a later one is not; keys are
 * per order; a refusal with its outcome and an answer without status keep their fields; of
 * concurrent first answers exactly one is recorded.
 */
class PayAnswersTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();
  private static final AtomicInteger NEXT = new AtomicInteger();

  private final String order = "ord-pa-" + NEXT.incrementAndGet();

  private PayAnswers answers() {
    return new PayAnswers(pg.db());
  }

  @Test
  void theFirstAnswerToAKeyIsKeptAndALaterOneIsNot() {
    PayAnswers answers = answers();
    assertNull(answers.recorded(order, "pay-1"));

    assertTrue(answers.remember(order, "pay-1", new Answer(200, null, OrderStatus.PAID, 3)));
    assertFalse(answers.remember(order, "pay-1", new Answer(409, CommandOutcome.REJECTED, OrderStatus.PAID, 3)));

    Answer first = answers.recorded(order, "pay-1");
    assertEquals(200, first.httpStatus());
    assertNull(first.outcome());
    assertEquals(OrderStatus.PAID, first.status());
    assertEquals(3, first.version());
    assertNotNull(first.answeredAt());
    assertEquals(1, pg.number("SELECT count(*) FROM pay_answer WHERE order_id = ?", order));
  }

  @Test
  void keysArePerOrderAndARefusalKeepsItsOutcome() {
    PayAnswers answers = answers();
    String other = order + "-b";
    answers.remember(order, "k", new Answer(200, null, OrderStatus.UNKNOWN, 3));
    answers.remember(other, "k", new Answer(409, CommandOutcome.REJECTED, OrderStatus.CANCELLED, 2));
    // a refusal before any create settled carries no status
    answers.remember(order, "k-early", new Answer(409, CommandOutcome.REJECTED, null, 0));

    assertEquals(new Answer(200, null, OrderStatus.UNKNOWN, 3), withoutTime(answers.recorded(order, "k")));
    assertEquals(new Answer(409, CommandOutcome.REJECTED, OrderStatus.CANCELLED, 2), withoutTime(answers.recorded(other, "k")));
    assertEquals(new Answer(409, CommandOutcome.REJECTED, null, 0), withoutTime(answers.recorded(order, "k-early")));
    assertNull(answers.recorded(order, "K"), "keys are compared as sent");
  }

  @Test
  void anAnswerThatIsNoAnswerIsRefusedByTheTable() {
    // the 503s and other failures are never recorded: the table takes 2xx..4xx only
    assertThrows(Database.DataError.class,
        () -> answers().remember(order, "k", new Answer(503, null, OrderStatus.PAYING, 2)));
    assertNull(answers().recorded(order, "k"));
  }

  @Test
  void ofConcurrentFirstAnswersExactlyOneIsRecorded() throws Exception {
    Database pool = pg.newDatabase(8, Database.DEFAULT_CONNECTION_TIMEOUT);
    ExecutorService threads = Executors.newFixedThreadPool(8);
    try {
      PayAnswers answers = new PayAnswers(pool);
      List<Callable<Boolean>> tries = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        int version = i + 1;
        tries.add(() -> answers.remember(order, "race", new Answer(200, null, OrderStatus.PAID, version)));
      }
      int first = 0;
      for (Future<Boolean> f : threads.invokeAll(tries)) if (f.get()) first++;
      assertEquals(1, first);
      assertEquals(1, pg.number("SELECT count(*) FROM pay_answer WHERE order_id = ? AND idempotency_key = 'race'", order));
    } finally {
      threads.shutdownNow();
      pool.close();
    }
  }

  private static Answer withoutTime(Answer a) {
    return new Answer(a.httpStatus(), a.outcome(), a.status(), a.version());
  }
}
