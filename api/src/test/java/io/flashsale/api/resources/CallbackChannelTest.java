package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.withSettings;

import io.flashsale.api.representations.CallbackAck;
import io.flashsale.domain.Notice;
import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.paymentchannel.http.SignedJsonCallbacks;
import io.flashsale.persistence.MigratedPostgres;
import io.flashsale.persistence.Notifications;
import io.flashsale.persistence.OrderQueries;
import io.flashsale.workflows.Orders;
import jakarta.ws.rs.core.Response;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.mockito.MockMakers;

/**
 * Two channels, A (the default) and B, each with its own callback secret: a notice that arrives
 * through B for an order of A is not applied, whatever it says; it is answered like an unknown
 * order (effect UNKNOWN_ORDER on its arrival) and no workflow hears of it. Through A the same
 * notice goes the usual way.
 */
class CallbackChannelTest {
  @RegisterExtension static final MigratedPostgres pg = new MigratedPostgres();
  private static final AtomicInteger NEXT = new AtomicInteger();
  private static final String SECRET_A = "secret-of-a";
  private static final String SECRET_B = "secret-of-b";

  private final Orders orders = mock(Orders.class, withSettings().mockMaker(MockMakers.INLINE));
  private CallbackResource resource;

  @BeforeEach
  void channels() {
    PaymentChannels channels = PaymentChannels.builder()
        .add("a", new UnusedChannel(), new SignedJsonCallbacks(List.of(SECRET_A)))
        .add("b", new UnusedChannel(), new SignedJsonCallbacks(List.of(SECRET_B)))
        .build("a");
    resource = new CallbackResource(new Notifications(pg.db()), new OrderQueries(pg.db()), orders, channels);
  }

  @Test
  void aNoticeThroughAnotherChannelIsNotApplied() {
    String order = order("a", "CREATED", null);
    Response r = resource.receive("b", signedBy(SECRET_B, body("n-1", order, "CHARGED", "t-1")),
        body("n-1", order, "CHARGED", "t-1"));

    assertEquals(200, r.getStatus());
    CallbackAck ack = (CallbackAck) r.getEntity();
    assertEquals(Notifications.UNKNOWN_ORDER, ack.effect());
    assertNull(ack.arrival());
    assertEquals(List.of(Notifications.UNKNOWN_ORDER), effects(order));
    verify(orders, never()).notify(anyString(), anyString(), anyString(), anyString(), anyString(), any(Notice.class));

    // the same notice through the order's own channel reaches its workflow
    assertEquals(200, resource.receive("a", signedBy(SECRET_A, body("n-1", order, "CHARGED", "t-1")),
        body("n-1", order, "CHARGED", "t-1")).getStatus());
    verify(orders, times(1)).notify(anyString(), anyString(), anyString(), anyString(), anyString(), any(Notice.class));
  }

  @Test
  void theDefaultRouteIsTheDefaultChannel() {
    String order = order("b", "CREATED", null);
    byte[] body = body("n-2", order, "DECLINED", null);
    Response r = resource.receive(signedBy(SECRET_A, body), body);
    assertEquals(Notifications.UNKNOWN_ORDER, ((CallbackAck) r.getEntity()).effect(), "the order is B's");
    verify(orders, never()).notify(anyString(), anyString(), anyString(), anyString(), anyString(), any(Notice.class));
  }

  /** Not even a copy of the charge the order was settled with is answered for it at arrival through B. */
  @Test
  void anotherChannelsCopyOfTheSettledChargeIsNotAnsweredAtArrival() {
    String order = order("a", "PAID", "t-9");
    byte[] body = body("n-3", order, "CHARGED", "t-9");
    Response viaB = resource.receive("b", signedBy(SECRET_B, body), body);
    assertEquals(Notifications.UNKNOWN_ORDER, ((CallbackAck) viaB.getEntity()).effect());

    Response viaA = resource.receive("a", signedBy(SECRET_A, body), body);
    assertEquals("DUPLICATE PAID", ((CallbackAck) viaA.getEntity()).effect());
    verify(orders, never()).notify(anyString(), anyString(), anyString(), anyString(), anyString(), any(Notice.class));
  }

  @Test
  void aChannelsCallbackSignedWithAnotherChannelsSecretIsRefused() {
    String order = order("b", "CREATED", null);
    byte[] body = body("n-4", order, "CHARGED", "t-4");
    jakarta.ws.rs.WebApplicationException e = org.junit.jupiter.api.Assertions.assertThrows(
        jakarta.ws.rs.WebApplicationException.class, () -> resource.receive("b", signedBy(SECRET_A, body), body));
    assertEquals(401, e.getResponse().getStatus());
    assertEquals(List.of(), effects(order), "nothing recorded");
  }

  /**
   * The notice raced the charge's reply: recorded while the order was PAYING, its run ended with
   * PAID before the signal went out. The row answers it (a PAID order's run ends with its pay); a
   * notice the row cannot answer still starts a new run.
   */
  @Test
  void aNoticeWhoseRunEndedMeanwhileIsAnsweredFromTheRowWhenItsChargeSettledTheOrder() {
    String order = order("a", "PAYING", null);
    org.mockito.Mockito.when(orders.signalRunning(anyString(), any(Notice.class))).thenAnswer(call -> {
      settle(order, "t-7"); // the pay's answer is applied and the run ends before the signal
      return false;
    });
    byte[] body = body("n-5", order, "CHARGED", "t-7");
    Response r = resource.receive("a", signedBy(SECRET_A, body), body);
    assertEquals("DUPLICATE PAID", ((CallbackAck) r.getEntity()).effect());
    assertEquals(List.of("DUPLICATE PAID"), effects(order));
    verify(orders, never()).notify(anyString(), anyString(), anyString(), anyString(), anyString(), any(Notice.class));

    byte[] other = body("n-6", order, "CHARGED", "t-8"); // another charge: only a workflow answers it
    resource.receive("a", signedBy(SECRET_A, other), other);
    verify(orders, times(1)).notify(anyString(), anyString(), anyString(), anyString(), anyString(), any(Notice.class));
  }

  /** The usual case: the order's run is running and takes the signal; no new run, the row answers nothing. */
  @Test
  void aNoticeGoesToTheRunningRunAlone() {
    String order = order("a", "PAYING", null);
    org.mockito.Mockito.when(orders.signalRunning(anyString(), any(Notice.class))).thenReturn(true);
    byte[] body = body("n-7", order, "CHARGED", "t-10");
    Response r = resource.receive("a", signedBy(SECRET_A, body), body);
    assertEquals(200, r.getStatus());
    assertNull(((CallbackAck) r.getEntity()).effect(), "the run applies it, so the arrival has no effect yet");
    verify(orders, times(1)).signalRunning(anyString(), any(Notice.class));
    verify(orders, never()).notify(anyString(), anyString(), anyString(), anyString(), anyString(), any(Notice.class));
    assertEquals(java.util.Collections.singletonList(null), effects(order), "one arrival, its effect the run's to record");
  }

  // ---- rows and requests

  private static void settle(String order, String chargeTxn) {
    pg.db().inTx(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "UPDATE orders SET status = 'PAID', version = 3, charge_txn = ? WHERE order_id = ?")) {
        ps.setString(1, chargeTxn);
        ps.setString(2, order);
        return ps.executeUpdate();
      }
    });
  }

  private static String order(String channel, String status, String chargeTxn) {
    String id = "ord-ch" + NEXT.incrementAndGet();
    pg.db().inTx(c -> {
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders (order_id, tenant, subject, request_key,"
          + " payload, sku, quantity, amount, status, version, reservation_key, workflow_id, charge_txn, channel)"
          + " VALUES (?, 't1', ?, 'k1', '{}', 'sku-1', 1, 1990, ?, 1, ?, ?, ?, ?)")) {
        ps.setString(1, id);
        ps.setString(2, "buyer-" + id);
        ps.setString(3, status);
        ps.setString(4, id + "/r1");
        ps.setString(5, "wf-" + id);
        ps.setString(6, chargeTxn);
        ps.setString(7, channel);
        return ps.executeUpdate();
      }
    });
    return id;
  }

  private static List<String> effects(String order) {
    return pg.db().read(c -> {
      try (PreparedStatement ps = c.prepareStatement(
          "SELECT effect FROM payment_notification WHERE merchant_order = ? ORDER BY id")) {
        ps.setString(1, order);
        try (var rs = ps.executeQuery()) {
          List<String> out = new java.util.ArrayList<>();
          while (rs.next()) out.add(rs.getString(1));
          return out;
        }
      }
    });
  }

  private static byte[] body(String notifyId, String order, String kind, String txn) {
    return ("{\"notify_id\":\"" + notifyId + "\",\"merchant_order\":\"" + order + "\",\"kind\":\"" + kind
        + "\",\"amount\":1990" + (txn == null ? "" : ",\"txn\":\"" + txn + "\"") + "}").getBytes(StandardCharsets.UTF_8);
  }

  private static java.util.function.Function<String, String> signedBy(String secret, byte[] body) {
    String header = CallbackSignatures.header(secret, System.currentTimeMillis() / 1000, body);
    return name -> CallbackSignatures.HEADER.equalsIgnoreCase(name) ? header : null;
  }
}
