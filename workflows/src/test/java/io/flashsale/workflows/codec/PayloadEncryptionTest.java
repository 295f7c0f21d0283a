package io.flashsale.workflows.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.temporal.api.common.v1.Payload;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.payload.codec.PayloadCodecException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PayloadEncryptionTest {
  static final String K1 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  static final String K2 = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

  record Note(String subject, String note) {}

  @Test
  void sealsWithTheActiveKeyAndOpensAgain() {
    PayloadEncryption codec = PayloadEncryption.fromHex(Map.of("k1", K1), "k1");
    Payload plain = DefaultDataConverter.STANDARD_INSTANCE.toPayload(new Note("user-0042", "gift")).orElseThrow();
    Payload sealed = codec.encode(List.of(plain)).get(0);
    assertEquals("binary/encrypted", sealed.getMetadataOrThrow("encoding").toStringUtf8());
    assertEquals("k1", sealed.getMetadataOrThrow(PayloadEncryption.KEY_ID).toStringUtf8());
    assertFalse(sealed.getData().toStringUtf8().contains("user-0042"));
    assertFalse(sealed.getData().toStringUtf8().contains("json/plain"));
    assertEquals(plain, codec.decode(List.of(sealed)).get(0));
    // a fresh nonce each time: the same value never seals to the same bytes
    assertNotEquals(sealed.getData(), codec.encode(List.of(plain)).get(0).getData());
  }

  @Test
  void aRotatedCodecOpensOldPayloadsAndSealsWithTheNewKey() {
    PayloadEncryption before = PayloadEncryption.fromHex(Map.of("k1", K1), "k1");
    PayloadEncryption after = PayloadEncryption.fromHex(Map.of("k1", K1, "k2", K2), "k2");
    DataConverter old = before.dataConverter();
    DataConverter rotated = after.dataConverter();
    Payload p = old.toPayload(new Note("user-0042", "gift")).orElseThrow();
    assertEquals(new Note("user-0042", "gift"), rotated.fromPayload(p, Note.class, Note.class));
    Payload fresh = rotated.toPayload(new Note("user-0043", "x")).orElseThrow();
    assertEquals("k2", fresh.getMetadataOrThrow(PayloadEncryption.KEY_ID).toStringUtf8());
    PayloadCodecException unknown = assertThrows(PayloadCodecException.class, () -> before.decode(List.of(fresh)));
    assertTrue(unknown.getMessage().contains("key id 'k2', which is not configured"), unknown.getMessage());
  }

  @Test
  void clearPayloadsPassThroughAndTamperingIsRefused() {
    PayloadEncryption codec = PayloadEncryption.fromHex(Map.of("k1", K1), "k1");
    Payload plain = DefaultDataConverter.STANDARD_INSTANCE.toPayload("from the CLI").orElseThrow();
    assertEquals(plain, codec.decode(List.of(plain)).get(0));
    Payload sealed = codec.encode(List.of(plain)).get(0);
    byte[] data = sealed.getData().toByteArray();
    data[data.length - 1] ^= 1;
    Payload altered = sealed.toBuilder().setData(ByteString.copyFrom(data)).build();
    assertThrows(PayloadCodecException.class, () -> codec.decode(List.of(altered)));
    // relabelled with another listed id: the id is authenticated
    PayloadEncryption two = PayloadEncryption.fromHex(Map.of("k1", K1, "k2", K1), "k1");
    Payload relabelled = two.encode(List.of(plain)).get(0).toBuilder()
        .putMetadata(PayloadEncryption.KEY_ID, ByteString.copyFromUtf8("k2")).build();
    assertThrows(PayloadCodecException.class, () -> two.decode(List.of(relabelled)));
  }

  @Test
  void badKeysAreNamedNeverShown() {
    IllegalArgumentException shortKey = assertThrows(IllegalArgumentException.class,
        () -> PayloadEncryption.fromHex(Map.of("k1", "abcd"), "k1"));
    assertEquals("payload key k1 must be 64 hex digits (32 bytes: openssl rand -hex 32)", shortKey.getMessage());
    assertThrows(IllegalArgumentException.class, () -> PayloadEncryption.fromHex(Map.of("k1", K1), "k9"));
    assertThrows(IllegalArgumentException.class,
        () -> PayloadEncryption.fromHex(Map.of("k1", "${FLASHSALE_PAYLOAD_KEY_K1}"), "k1"));
    assertThrows(IllegalArgumentException.class, () -> PayloadEncryption.fromHex(Map.of(), "k1"));
  }
}
