package io.flashsale.api.codec;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.flashsale.problem.Problem;
import io.temporal.api.common.v1.Payloads;
import io.temporal.payload.codec.PayloadCodec;
import io.temporal.payload.codec.PayloadCodecException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The codec endpoint on the admin port (docs/DESIGN.md §Payload encryption), in the Temporal
 * codec-server protocol the Web UI and the temporal CLI speak: POST {@code /codec/encode} and
 * {@code /codec/decode} with {@code {"payloads":[{"metadata":{k: base64}, "data": base64}]}},
 * answered in kind. The admin guard asks for the operator's credential first; this servlet admits
 * browsers only from the configured Web UI origins (CORS, preflight included) and only JSON bodies,
 * so a page elsewhere cannot send one without a preflight it is refused.
 */
public final class CodecServlet extends HttpServlet {
  private static final Logger log = LoggerFactory.getLogger(CodecServlet.class);
  public static final String PATH = "/codec";
  static final int MAX_BODY_BYTES = 4 * 1024 * 1024;
  private static final String ALLOWED_HEADERS = "Content-Type, X-Namespace, Authorization";

  private final transient PayloadCodec codec;
  private final Set<String> origins;
  private final String namespace;

  /**
   * @param origins the browser origins admitted, e.g. {@code http://127.0.0.1:8233}
   * @param namespace the one namespace this service's payloads live in (X-Namespace, when sent, must name it)
   */
  public CodecServlet(PayloadCodec codec, Set<String> origins, String namespace) {
    this.codec = codec;
    this.origins = Set.copyOf(origins);
    this.namespace = namespace;
  }

  @Override
  protected void doOptions(HttpServletRequest req, HttpServletResponse res) throws IOException {
    String origin = req.getHeader("Origin");
    if (origin == null || !origins.contains(origin)) {
      refuse(res, 403, "CODEC_ORIGIN_REFUSED", "the codec endpoint admits browsers from its configured origins only"
          + " (temporal.payloadEncryption.codecCorsOrigins)");
      return;
    }
    cors(res, origin);
    res.setHeader("Access-Control-Allow-Methods", "POST, OPTIONS");
    res.setHeader("Access-Control-Allow-Headers", ALLOWED_HEADERS);
    res.setHeader("Access-Control-Max-Age", "600");
    res.setStatus(204);
  }

  @Override
  protected void doPost(HttpServletRequest req, HttpServletResponse res) throws IOException {
    String origin = req.getHeader("Origin");
    if (origin != null) {
      if (!origins.contains(origin)) {
        refuse(res, 403, "CODEC_ORIGIN_REFUSED", "the codec endpoint admits browsers from its configured origins only"
            + " (temporal.payloadEncryption.codecCorsOrigins)");
        return;
      }
      cors(res, origin);
    }
    String op = req.getPathInfo() == null ? "" : req.getPathInfo();
    boolean encode = "/encode".equals(op);
    if (!encode && !"/decode".equals(op)) {
      refuse(res, 404, "CODEC_UNKNOWN_OPERATION", "the codec endpoint answers POST " + PATH + "/encode and "
          + PATH + "/decode");
      return;
    }
    String type = req.getContentType();
    if (type == null || !type.toLowerCase(Locale.ROOT).startsWith("application/json")) {
      refuse(res, 415, "CODEC_JSON_REQUIRED", "the codec endpoint takes Content-Type: application/json");
      return;
    }
    String ns = req.getHeader("X-Namespace");
    if (ns != null && !ns.isBlank() && !ns.equals(namespace)) {
      refuse(res, 400, "CODEC_NAMESPACE_UNKNOWN", "this codec serves namespace " + namespace + " only");
      return;
    }
    byte[] body;
    try (InputStream in = req.getInputStream()) {
      body = in.readNBytes(MAX_BODY_BYTES + 1);
    }
    if (body.length > MAX_BODY_BYTES) {
      refuse(res, 413, "CODEC_BODY_TOO_LARGE", "the codec endpoint takes at most " + MAX_BODY_BYTES + " bytes");
      return;
    }
    Payloads.Builder in = Payloads.newBuilder();
    try {
      JsonFormat.parser().ignoringUnknownFields().merge(new String(body, StandardCharsets.UTF_8), in);
    } catch (InvalidProtocolBufferException | RuntimeException e) {
      refuse(res, 400, "CODEC_BAD_REQUEST", "the body must be {\"payloads\":[{\"metadata\":{...},\"data\":\"...\"}]}");
      return;
    }
    Payloads out;
    try {
      out = Payloads.newBuilder()
          .addAllPayloads(encode ? codec.encode(in.getPayloadsList()) : codec.decode(in.getPayloadsList())).build();
    } catch (PayloadCodecException e) {
      log.warn("codec {} refused: {}", op, e.getMessage());
      refuse(res, 422, "CODEC_PAYLOAD_REFUSED", e.getMessage());
      return;
    }
    res.setStatus(200);
    res.setContentType("application/json");
    res.setHeader("Cache-Control", "no-store"); // decoded payloads are the very data the engine must not keep
    res.getOutputStream().write(JsonFormat.printer().omittingInsignificantWhitespace().print(out)
        .getBytes(StandardCharsets.UTF_8));
  }

  private static void cors(HttpServletResponse res, String origin) {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Access-Control-Allow-Credentials", "true");
    res.setHeader("Vary", "Origin");
  }

  private static void refuse(HttpServletResponse res, int status, String code, String message) throws IOException {
    res.setStatus(status);
    res.setContentType(Problem.MEDIA_TYPE);
    res.getOutputStream().write(Problem.of(status, code, message).toJson());
  }
}
