package io.flashsale.api.resources;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.flashsale.paymentchannel.CallbackSignatures;
import io.flashsale.paymentchannel.PaymentChannels;
import io.flashsale.paymentchannel.http.SignedJsonCallbacks;
import io.flashsale.problem.Problem;
import jakarta.ws.rs.WebApplicationException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** Callback verification fails closed: without a secret nothing is verified, so nothing is taken. */
class CallbackVerificationTest {
  private static final byte[] BODY = ("{\"notify_id\":\"n1\",\"merchant_order\":\"ord-0001\",\"kind\":\"CHARGED\","
      + "\"amount\":1990,\"txn\":\"t1\"}").getBytes(StandardCharsets.UTF_8);

  @Test
  void withoutASecretEveryCallbackIsRefusedBeforeAnythingIsRecorded() {
    for (List<String> none : List.of(List.<String>of(), Arrays.asList("", null))) {
      CallbackResource resource = resource(none);
      for (String signature : new String[] {null, "t=1,v1=" + "0".repeat(64),
          CallbackSignatures.header("any-secret", System.currentTimeMillis() / 1000, BODY)}) {
        WebApplicationException e = assertThrows(WebApplicationException.class, () -> resource.receive(signed(signature), BODY));
        assertEquals(401, e.getResponse().getStatus());
        assertEquals("BAD_SIGNATURE", ((Problem) e.getResponse().getEntity()).code());
        assertEquals("application/problem+json", e.getResponse().getMediaType().toString());
        assertEquals("Signature realm=\"flashsale-callbacks\", header=\"X-Channel-Signature\"",
            e.getResponse().getHeaderString("WWW-Authenticate"));
      }
    }
  }

  @Test
  void aSignatureOfNeitherAcceptedSecretIsRefused() {
    CallbackResource resource = resource(List.of("current-secret", "previous-secret"));
    long now = System.currentTimeMillis() / 1000;
    WebApplicationException e = assertThrows(WebApplicationException.class,
        () -> resource.receive(signed(CallbackSignatures.header("a-third-secret", now, BODY)), BODY));
    assertEquals(401, e.getResponse().getStatus());
  }

  /** The reader's refusals keep their status, code and message; only a 401 carries the challenge. */
  @Test
  void aBodyRefusalIsAProblemDetailWithTheReadersCodeAndNoChallenge() {
    CallbackResource resource = resource(List.of("s"));
    byte[] dup = "{\"amount\":1,\"amount\":2}".getBytes(StandardCharsets.UTF_8);
    WebApplicationException e = assertThrows(WebApplicationException.class, () -> resource.receive(
        signed(CallbackSignatures.header("s", System.currentTimeMillis() / 1000, dup)), dup));
    assertEquals(400, e.getResponse().getStatus());
    assertEquals("MALFORMED_JSON", ((Problem) e.getResponse().getEntity()).code());
    assertEquals("the request body is not valid JSON", ((Problem) e.getResponse().getEntity()).detail());
    assertEquals(null, e.getResponse().getHeaderString("WWW-Authenticate"));
  }

  @Test
  void anUnknownChannelIsNotFound() {
    WebApplicationException e = assertThrows(WebApplicationException.class,
        () -> resource(List.of("s")).receiveOf("other", null, BODY));
    assertEquals(404, e.getResponse().getStatus());
    assertEquals("UNKNOWN_CHANNEL", ((Problem) e.getResponse().getEntity()).code());
    assertEquals("application/problem+json", e.getResponse().getMediaType().toString());
  }

  /** No notifications, queries or engine: a refused callback must not reach them. */
  private static CallbackResource resource(List<String> secrets) {
    return new CallbackResource(null, null, null, PaymentChannels.single(new UnusedChannel(),
        new SignedJsonCallbacks(secrets)));
  }

  private static Function<String, String> signed(String signature) {
    return name -> CallbackSignatures.HEADER.equalsIgnoreCase(name) ? signature : null;
  }
}
