package io.flashsale.devstack.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flashsale.workflows.codec.PayloadEncryption;
import io.temporal.api.common.v1.Payload;
import io.temporal.common.converter.DataConverter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** --payload-key id=ENV_VAR: the secret comes from the environment, never the command line. */
class ReplayCommandKeysTest {
  static final String K1 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
  static final String K2 = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100";

  @Test
  void keysFromTheNamedVariablesOpenWhatEitherSealed() {
    Map<String, String> env = Map.of("KEY_ONE", K1, "KEY_TWO", K2);
    DataConverter converter = ReplayCommand.converter(List.of("k1=KEY_ONE", "k2=KEY_TWO"), env::get);
    assertNotNull(converter);
    Payload sealedWithK2 = PayloadEncryption.fromHex(Map.of("k2", K2), "k2").dataConverter().toPayload("x").orElseThrow();
    assertEquals("x", converter.fromPayload(sealedWithK2, String.class, String.class));
    assertNull(ReplayCommand.converter(List.of(), env::get), "no --payload-key: the default converter");
  }

  @Test
  void aMissingVariableOrAMalformedSpecIsNamed() {
    IllegalArgumentException unset = assertThrows(IllegalArgumentException.class,
        () -> ReplayCommand.converter(List.of("k1=NOT_SET"), name -> null));
    assertEquals("--payload-key k1=NOT_SET: the environment variable NOT_SET is not set", unset.getMessage());
    assertThrows(IllegalArgumentException.class, () -> ReplayCommand.converter(List.of("k1"), name -> K1));
  }
}
