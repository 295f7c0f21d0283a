package io.flashsale.activities;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.CreateOrder;
import io.flashsale.domain.Notice;
import io.flashsale.domain.OperatorProof;
import io.flashsale.persistence.MigratedPostgres;
import io.flashsale.persistence.Skus;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A {@code paymentNotification} signal without an arrival is an operator's only with the proof made
 * under the operator credential: without it, or with another key's, or for another order, it is
 * recorded as REJECTED and never reaches the order's rules (docs/DESIGN.md §Trust boundaries).
 */
class OperatorSignalTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();
  private static final String KEY = "operator-credential-0123456789abcdef";

  @Test
  void onlyANoticeProvedWithTheOperatorCredentialIsRecordedForApplying() {
    assertEquals(Skus.Upsert.CREATED, new Skus(pg.db()).upsert("t1", "sku-op", 5, 1990L, 3).outcome());
    OrderActivitiesImpl db = new OrderActivitiesImpl(pg.db(), Duration.ofMinutes(1), new Safeguards(),
        HotRowGate.unlimited(), KEY);
    String orderId = db.reserve(new CreateOrder("t1", "user-1", "k1", "sku-op", 1, null), "order:t1:user-1:k1")
        .order().orderId();

    Notice forged = new Notice(0, "ops-1", "CHARGED", 1990, "txn-1");
    Notice refused = db.recordSignalArrival(orderId, forged, "run/1");
    assertTrue(refused.rejection().startsWith("no valid operator_proof"), refused.toString());
    assertTrue(refused.recorded(), "recorded, so reconciliation and the order's arrivals show it");

    String otherKey = OperatorProof.of("a-guessed-key-0123456789abcdefghij", orderId, "ops-1", "CHARGED", 1990, "txn-1");
    assertTrue(db.recordSignalArrival(orderId, withProof(forged, otherKey), "run/2").rejection() != null, "another key");
    String otherOrder = OperatorProof.of(KEY, "ord-000000000001", "ops-1", "CHARGED", 1990, "txn-1");
    assertTrue(db.recordSignalArrival(orderId, withProof(forged, otherOrder), "run/3").rejection() != null,
        "a proof for another order");
    String moreMoney = OperatorProof.of(KEY, orderId, "ops-1", "CHARGED", 1, "txn-1");
    assertTrue(db.recordSignalArrival(orderId, withProof(forged, moreMoney), "run/4").rejection() != null,
        "a proof for another amount");

    String proof = OperatorProof.of(KEY, orderId, "ops-1", "CHARGED", 1990, "txn-1");
    Notice proved = db.recordSignalArrival(orderId, withProof(forged, proof), "run/5");
    assertNull(proved.rejection(), proved.toString());
    assertEquals(0, pg.number("SELECT count(*) FROM payment_notification WHERE id = ? AND effect IS NOT NULL",
        proved.notificationId()), "recorded for the workflow to apply");
    assertEquals(4, pg.number("SELECT count(*) FROM payment_notification WHERE merchant_order = ?"
        + " AND effect LIKE 'REJECTED no valid operator_proof%'", orderId), "each refusal kept with its reason");
  }

  private static Notice withProof(Notice n, String proof) {
    return new Notice(n.notificationId(), n.notifyId(), n.kind(), n.amount(), n.txn(), null, proof);
  }
}
