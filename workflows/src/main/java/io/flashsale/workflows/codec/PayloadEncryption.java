package io.flashsale.workflows.codec;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.temporal.api.common.v1.Payload;
import io.temporal.common.converter.CodecDataConverter;
import io.temporal.common.converter.DataConverter;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.common.converter.EncodingKeys;
import io.temporal.payload.codec.PayloadCodec;
import io.temporal.payload.codec.PayloadCodecException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * The payload codec (docs/DESIGN.md §Payload encryption): every payload the client, the worker or
 * a tool hands to the engine is sealed with AES-256-GCM under the active key, a fresh 12-byte nonce
 * each, and carries the key's id in its metadata; any listed key opens what it sealed, so a new
 * active key can be rolled out while the old one still decodes older histories. A payload that is
 * not encrypted (the temporal CLI's --input, histories from before encryption) passes through.
 */
public final class PayloadEncryption implements PayloadCodec {
  public static final String ENCODING = "binary/encrypted";
  public static final String KEY_ID = "encryption-key-id";
  public static final String CIPHER_NAME = "encryption-cipher";
  static final String TRANSFORMATION = "AES/GCM/NoPadding";
  static final int NONCE_BYTES = 12;
  static final int TAG_BITS = 128;
  static final int KEY_BYTES = 32;
  private static final Pattern KEY_ID_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final ByteString ENCODING_BYTES = ByteString.copyFromUtf8(ENCODING);
  private static final ByteString CIPHER_BYTES = ByteString.copyFromUtf8(TRANSFORMATION);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Map<String, SecretKeySpec> keys;
  private final String activeKeyId;

  /**
   * @param hexKeys key id → 64 hex digits (32 bytes, {@code openssl rand -hex 32})
   * @param activeKeyId the key that seals new payloads; one of {@code hexKeys}
   * @throws IllegalArgumentException naming the key that is missing or malformed (never its value)
   */
  public static PayloadEncryption fromHex(Map<String, String> hexKeys, String activeKeyId) {
    if (hexKeys == null || hexKeys.isEmpty()) throw new IllegalArgumentException("payload encryption needs at least one key");
    Map<String, byte[]> raw = new LinkedHashMap<>();
    hexKeys.forEach((id, hex) -> {
      String text = hex == null ? "" : hex.trim();
      if (text.contains("${")) {
        throw new IllegalArgumentException("payload key " + id + " is an unset environment variable (" + text + ")");
      }
      if (!text.matches("[0-9a-fA-F]{64}")) {
        throw new IllegalArgumentException("payload key " + id + " must be 64 hex digits (32 bytes: openssl rand -hex 32)");
      }
      raw.put(id, HexFormat.of().parseHex(text));
    });
    return new PayloadEncryption(raw, activeKeyId);
  }

  public PayloadEncryption(Map<String, byte[]> rawKeys, String activeKeyId) {
    Map<String, SecretKeySpec> specs = new LinkedHashMap<>();
    rawKeys.forEach((id, bytes) -> {
      if (id == null || !KEY_ID_PATTERN.matcher(id).matches()) {
        throw new IllegalArgumentException("payload key id '" + id + "' must be 1-64 of A-Z a-z 0-9 . _ -");
      }
      if (bytes == null || bytes.length != KEY_BYTES) {
        throw new IllegalArgumentException("payload key " + id + " must be " + KEY_BYTES + " bytes (AES-256)");
      }
      specs.put(id, new SecretKeySpec(bytes, "AES"));
    });
    if (activeKeyId == null || !specs.containsKey(activeKeyId)) {
      throw new IllegalArgumentException("the active payload key id '" + activeKeyId + "' is not among the keys "
          + specs.keySet());
    }
    this.keys = Map.copyOf(specs);
    this.activeKeyId = activeKeyId;
  }

  public String activeKeyId() {
    return activeKeyId;
  }

  public java.util.Set<String> keyIds() {
    return keys.keySet();
  }

  /** The SDK's default converter (JSON and friends) with this codec under it. */
  public DataConverter dataConverter() {
    return dataConverter(this);
  }

  /** {@code codec} null: the SDK's default converter, payloads in clear text. */
  public static DataConverter dataConverter(PayloadEncryption codec) {
    if (codec == null) return DefaultDataConverter.STANDARD_INSTANCE;
    return new CodecDataConverter(DefaultDataConverter.STANDARD_INSTANCE, List.of(codec));
  }

  @Override
  public List<Payload> encode(List<Payload> payloads) {
    List<Payload> out = new ArrayList<>(payloads.size());
    for (Payload p : payloads) out.add(seal(p));
    return out;
  }

  @Override
  public List<Payload> decode(List<Payload> payloads) {
    List<Payload> out = new ArrayList<>(payloads.size());
    for (Payload p : payloads) out.add(open(p));
    return out;
  }

  /** True when the payload is sealed by this codec's scheme (with any key). */
  public static boolean encrypted(Payload p) {
    return ENCODING_BYTES.equals(p.getMetadataOrDefault(EncodingKeys.METADATA_ENCODING_KEY, ByteString.EMPTY));
  }

  private Payload seal(Payload plain) {
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    try {
      Cipher cipher = Cipher.getInstance(TRANSFORMATION);
      cipher.init(Cipher.ENCRYPT_MODE, keys.get(activeKeyId), new GCMParameterSpec(TAG_BITS, nonce));
      // the key id is authenticated: a payload relabelled with another id fails to open
      cipher.updateAAD(activeKeyId.getBytes(StandardCharsets.UTF_8));
      byte[] sealed = cipher.doFinal(plain.toByteArray()); // the whole payload, its encoding metadata too
      ByteBuffer data = ByteBuffer.allocate(NONCE_BYTES + sealed.length).put(nonce).put(sealed);
      return Payload.newBuilder()
          .putMetadata(EncodingKeys.METADATA_ENCODING_KEY, ENCODING_BYTES)
          .putMetadata(CIPHER_NAME, CIPHER_BYTES)
          .putMetadata(KEY_ID, ByteString.copyFromUtf8(activeKeyId))
          .setData(ByteString.copyFrom(data.array()))
          .build();
    } catch (GeneralSecurityException e) {
      throw new PayloadCodecException("payload could not be encrypted with key " + activeKeyId, e);
    }
  }

  private Payload open(Payload p) {
    if (!encrypted(p)) return p;
    String keyId = p.getMetadataOrDefault(KEY_ID, ByteString.EMPTY).toStringUtf8();
    SecretKeySpec key = keys.get(keyId);
    if (key == null) {
      throw new PayloadCodecException("payload encrypted with key id '" + keyId + "', which is not configured (keys: "
          + String.join(", ", new java.util.TreeSet<>(keys.keySet()))
          + "); list the old key beside the new active one until no history needs it");
    }
    byte[] data = p.getData().toByteArray();
    if (data.length < NONCE_BYTES + TAG_BITS / 8) {
      throw new PayloadCodecException("encrypted payload (key id '" + keyId + "') is too short: " + data.length + " bytes");
    }
    try {
      Cipher cipher = Cipher.getInstance(TRANSFORMATION);
      cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, data, 0, NONCE_BYTES));
      cipher.updateAAD(keyId.getBytes(StandardCharsets.UTF_8));
      return Payload.parseFrom(cipher.doFinal(data, NONCE_BYTES, data.length - NONCE_BYTES));
    } catch (GeneralSecurityException e) {
      throw new PayloadCodecException("payload with key id '" + keyId + "' does not open with that key"
          + " (another key under the same id, or altered data)", e);
    } catch (InvalidProtocolBufferException e) {
      throw new PayloadCodecException("payload with key id '" + keyId + "' opened but is no payload", e);
    }
  }
}
