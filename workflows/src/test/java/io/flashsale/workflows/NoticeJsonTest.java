package io.flashsale.workflows;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.flashsale.domain.Notice;
import io.temporal.api.common.v1.Payload;
import io.temporal.common.converter.DefaultDataConverter;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The signal's payload as Temporal's data converter reads it: the API's form and the operator's. */
class NoticeJsonTest {
  private static Notice read(String json) {
    Payload p = Payload.newBuilder()
        .putMetadata("encoding", com.google.protobuf.ByteString.copyFromUtf8("json/plain"))
        .setData(com.google.protobuf.ByteString.copyFromUtf8(json)).build();
    return DefaultDataConverter.STANDARD_INSTANCE.fromPayload(p, Notice.class, Notice.class);
  }

  @Test
  void theApisNoticeRoundTrips() {
    Notice n = new Notice(42, "ntf-1", "CHARGED", 1990, "txn-1");
    Optional<Payload> p = DefaultDataConverter.STANDARD_INSTANCE.toPayload(n);
    Notice back = DefaultDataConverter.STANDARD_INSTANCE.fromPayload(p.orElseThrow(), Notice.class, Notice.class);
    assertEquals(n, back);
    assertTrue(back.recorded());
  }

  @Test
  void theCallbacksFieldsAsAnOperatorSendsThem() {
    Notice n = read("{\"notify_id\":\"ops-1\",\"kind\":\"CHARGED\",\"amount\":1990,\"txn\":\"txn-000001\"}");
    assertEquals(new Notice(0, "ops-1", "CHARGED", 1990, "txn-000001", null), n);
    assertFalse(n.recorded());
  }

  @Test
  void anOperatorsProofTravelsWithTheNotice() {
    Notice n = read("{\"notify_id\":\"ops-1\",\"kind\":\"CHARGED\",\"amount\":1990,\"operator_proof\":\"abc_-1\"}");
    assertEquals("abc_-1", n.operatorProof());
    Optional<Payload> p = DefaultDataConverter.STANDARD_INSTANCE.toPayload(n);
    assertEquals(n, DefaultDataConverter.STANDARD_INSTANCE.fromPayload(p.orElseThrow(), Notice.class, Notice.class),
        "the activity that records it gets the proof");
  }

  @Test
  void malformedPayloadsBecomeRejectedNoticesNeverExceptions() {
    assertEquals("amount must be a non-negative integer",
        read("{\"notify_id\":\"ops-2\",\"kind\":\"CHARGED\",\"amount\":\"lots\"}").rejection());
    assertEquals("amount must be a non-negative integer",
        read("{\"notify_id\":\"x\",\"kind\":\"CHARGED\",\"amount\":18446744073709551617}").rejection());
    assertEquals("kind must be CHARGED, DECLINED or REFUNDED",
        read("{\"notify_id\":\"x\",\"kind\":\"PAID\",\"amount\":1}").rejection());
    assertEquals("notify_id missing or not an id", read("{\"kind\":\"CHARGED\",\"amount\":1}").rejection());
    assertEquals("payload is not a JSON object", read("[1,2]").rejection());
    assertNull(read("{\"notify_id\":\"x\",\"kind\":\"REFUNDED\",\"amount\":0}").rejection());
  }
}
