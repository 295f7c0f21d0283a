package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.flashsale.api.core.Bodies;
import io.flashsale.api.core.StrictJson;
import io.flashsale.paymentchannel.CallbackRefusal;
import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.paymentchannel.ChannelNotice;
import io.flashsale.paymentchannel.http.SignedJsonCallbacks;
import io.flashsale.problem.Problem;
import jakarta.ws.rs.WebApplicationException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The stub's callback format, read behind the channel port, answers every body as the API's own
 * body rules ({@link StrictJson}, {@link Bodies}) answer it: the same notice, or the same code and
 * message. A change to the API's rules that the reader does not follow fails here.
 */
class CallbackFormatParityTest {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  private static final Pattern KIND = Pattern.compile("CHARGED|DECLINED|REFUNDED");
  private static final String SECRET = "s";

  @Test
  void theReaderAnswersEveryBodyAsTheApisRulesDo() {
    List<String> bodies = List.of(
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"CHARGED\",\"amount\":1990,\"txn\":\"t\"}",
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"DECLINED\",\"amount\":3.0,\"new_field\":[1]}",
        "", "null", "[]", "7", "not json", "{\"a\":1}{}", "{\"a\":1,\"a\":2}",
        "{}", "{\"notify_id\":\"\"}", "{\"notify_id\":\"n\\u0001\"}", "{\"notify_id\":\"\\udc00\"}",
        "{\"notify_id\":true}", "{\"notify_id\":\"n\",\"merchant_order\":\"o\"}",
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"charged\"}",
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"REFUNDED\",\"amount\":1e400}",
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"REFUNDED\",\"amount\":-0.0}",
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"REFUNDED\",\"amount\":18446744073709551616}",
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"REFUNDED\",\"amount\":1,\"txn\":\"" + "x".repeat(65) + "\"}",
        "{\"notify_id\":\"n\",\"merchant_order\":\"o\",\"kind\":\"REFUNDED\",\"amount\":1,\"txn\":null}");
    SignedJsonCallbacks reader = new SignedJsonCallbacks(List.of(SECRET));
    for (String body : bodies) {
      byte[] raw = body.getBytes(StandardCharsets.UTF_8);
      String header = CallbackSignatures.header(SECRET, System.currentTimeMillis() / 1000, raw);
      String viaReader;
      try {
        ChannelNotice n = reader.read(name -> CallbackSignatures.HEADER.equalsIgnoreCase(name) ? header : null, raw);
        viaReader = n.toString();
      } catch (CallbackRefusal r) {
        viaReader = r.status() + " " + r.code() + " " + r.getMessage();
      }
      assertEquals(viaApiRules(raw), viaReader, body);
    }
  }

  /** The body read as the API read a callback before the format moved behind the port. */
  private static String viaApiRules(byte[] raw) {
    try {
      JsonNode body;
      try {
        body = StrictJson.MAPPER.readTree(raw);
      } catch (IOException e) {
        throw io.flashsale.api.core.ApiError.badRequest("MALFORMED_JSON", "the request body is not valid JSON");
      }
      Bodies.objectIgnoringUnknown(body);
      String notifyId = Bodies.text(body, "notify_id", ID, true);
      String merchantOrder = Bodies.text(body, "merchant_order", ID, true);
      String kind = Bodies.text(body, "kind", KIND, true);
      long amount = Bodies.integer(body, "amount", 0, Long.MAX_VALUE);
      String txn = Bodies.text(body, "txn", ID, false);
      return new ChannelNotice(notifyId, merchantOrder, kind, amount, txn).toString();
    } catch (WebApplicationException e) {
      Problem p = (Problem) e.getResponse().getEntity();
      return e.getResponse().getStatus() + " " + p.code() + " " + p.detail();
    }
  }
}
